package drain

import (
	"os"
	"testing"

	"github.com/proxy-await/proxy-await/internal/testchild"
)

func TestMain(m *testing.M) {
	testchild.Main()
	testchild.NoRaceExitSleep()
	os.Exit(m.Run())
}

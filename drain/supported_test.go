package drain

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// config refuses --drain-quiet off Linux by runtime.GOOS, not by importing
// this package: the two must agree.
func TestSupportedOnLinuxOnly(t *testing.T) {
	assert.Equal(t, runtime.GOOS == "linux", Supported)
}

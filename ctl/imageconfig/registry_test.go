package imageconfig

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"
)

// helperName is the credential helper this test binary plays: the Docker
// config names it "imageconfig-test", and docker's client runs
// docker-credential-imageconfig-test from PATH, where testscript.Main puts
// this binary under that name.
const helperName = "imageconfig-test"

// The helper's answer comes from the test's environment.
const (
	helperServerEnv = "IMAGECONFIG_TEST_HELPER_SERVER"
	helperUserEnv   = "IMAGECONFIG_TEST_HELPER_USER"
	helperSecretEnv = "IMAGECONFIG_TEST_HELPER_SECRET"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"docker-credential-" + helperName: credentialHelper})
}

// credentialHelper answers "get" as a Docker credential helper does: the
// server's name on stdin, its credentials as JSON on stdout, and "not
// found" for a server it has none for.
func credentialHelper() {
	server, _ := io.ReadAll(os.Stdin)
	if len(os.Args) != 2 || os.Args[1] != "get" {
		fmt.Println("only get is played")
		os.Exit(1)
	}
	if strings.TrimSpace(string(server)) != os.Getenv(helperServerEnv) {
		fmt.Println("credentials not found in native keychain")
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{
		"ServerURL": strings.TrimSpace(string(server)),
		"Username":  os.Getenv(helperUserEnv),
		"Secret":    os.Getenv(helperSecretEnv),
	})
}

// resolver is a Resolver with the options o and no entrypoints file but
// the one o names.
func resolver(t *testing.T, o Options) *Resolver {
	t.Helper()
	r, err := New(o)
	require.NoError(t, err)
	return r
}

// closedPort is a loopback host:port on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

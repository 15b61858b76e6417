// Package process holds proxy-await's process-level tests and their one
// harness: proxy-await run as a whole process with real children, signals,
// terminals, PID namespaces, a container, network namespaces for the drain,
// HAProxy and the real sidecars.
//
// They need proxy-await's binary, and the only test binary that holds it is
// the root package's: a test binary of its own here would have to build it.
// So the tests are the methods of Tests, in ordinary files, and the root
// package's TestProcess runs them with that binary as proxy-await, the fake
// proxy and the children, each as a subtest named after its method:
//
//	go test -run 'TestProcess/TestPID1' .
package process

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tests are the process-level tests, one method each, named as a test
// function would be.
type Tests struct{}

// Run runs every test of Tests as a subtest of t. The test binary plays
// proxy-await under that name, found on PATH: the root package's TestMain
// puts it there.
func Run(t *testing.T) {
	path, err := exec.LookPath("proxy-await")
	require.NoError(t, err, "proxy-await is not on PATH: run these tests through the root package's TestProcess")
	proxyAwaitBin = path
	t.Cleanup(func() {
		if public.dir != "" {
			os.RemoveAll(public.dir)
		}
		// go test -count=2 runs Run again: it makes its own copy.
		public.once, public.dir, public.path, public.err = sync.Once{}, "", "", nil
	})
	tests := reflect.ValueOf(Tests{})
	for i := range tests.NumMethod() {
		name := tests.Type().Method(i).Name
		test, ok := tests.Method(i).Interface().(func(*testing.T))
		require.True(t, ok && strings.HasPrefix(name, "Test"), "Tests.%s is not a test: a func(*testing.T) named Test...", name)
		t.Run(name, test)
	}
}

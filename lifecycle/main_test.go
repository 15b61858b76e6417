package lifecycle_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/proxy-await/proxy-await/ctl"
	"github.com/proxy-await/proxy-await/internal/fakeproxy"
	"github.com/proxy-await/proxy-await/internal/testchild"
	"github.com/proxy-await/proxy-await/lifecycle"
)

// proxyAwait is proxy-await as main runs it: the lifecycle, then exit.
func proxyAwait() { os.Exit(lifecycle.Main(os.Args, os.Environ())) }

// commands are the programs this test binary is, by the name it runs
// under: proxy-await, under its own name and the drop-in names it answers
// to, the fake proxy, and proxy-awaitctl. TestMain puts each on PATH (testscript.Main), so
// that the tests run proxy-await's own code, with -race and -cover as the
// tests have them, and build nothing.
var commands = map[string]func(){
	"proxy-await":   proxyAwait,
	"linkerd-await": proxyAwait,
	"scuttle":       proxyAwait,
	"fakeproxy":     fakeproxy.Main,
	// The platform tool, for the scenarios that show its line doing
	// what a usage error of proxy-await's hints at.
	"proxy-awaitctl": func() { os.Exit(ctl.Main(os.Args, os.Environ())) },
}

// TestMain runs a command when this binary is started under its name; a
// child scenario when testchild's variable names one; else the tests. The
// name comes first: proxy-await passes the variable on to its child.
func TestMain(m *testing.M) {
	if _, ok := commands[filepath.Base(os.Args[0])]; !ok {
		testchild.Main()
		testchild.NoRaceExitSleep()
		testchild.DetachTerminal()
		testchild.UnignoreSignals()
	}
	testscript.Main(tests{m}, commands)
}

// tests are this package's tests as testscript.Main runs them once the
// commands are on PATH: proxy-await is found there, and what the tests
// share is removed after the last.
type tests struct{ m *testing.M }

func (ts tests) Run() int {
	path, err := exec.LookPath("proxy-await")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	proxyAwaitBin = path
	defer func() {
		if public.dir != "" {
			os.RemoveAll(public.dir)
		}
	}()
	return ts.m.Run()
}

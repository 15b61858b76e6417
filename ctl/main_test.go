package ctl_test

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/proxy-await/proxy-await/ctl"
	"github.com/proxy-await/proxy-await/internal/scripttest"
	"github.com/proxy-await/proxy-await/lifecycle"
)

// commands are the programs this test binary is, by the name it runs
// under: proxy-awaitctl, and proxy-await beside it (a scenario may run what
// inject wrote). TestMain puts each on PATH (testscript.Main), so that the
// scenarios run the commands' own code, with -race as the tests have it,
// and build nothing.
var commands = map[string]func(){
	"proxy-awaitctl": func() { os.Exit(ctl.Main(os.Args, os.Environ())) },
	"proxy-await":    func() { os.Exit(lifecycle.Main(os.Args, os.Environ())) },
}

var update = flag.Bool("update", false, "rewrite the files that the scenarios' cmp compare stdout and stderr with")

func TestMain(m *testing.M) {
	testscript.Main(m, commands)
}

// TestScripts runs the command-line scenarios in testdata/script, one file
// a scenario, named after it (go test -run TestScripts/check-stdin-json):
// what a platform engineer types and what proxy-awaitctl answers. The
// commands beside testscript's own are package scripttest's (exits,
// cmplog). The environment holds nothing of the developer's. go test -run
// TestScripts -update rewrites what cmp compares with, to be read line by
// line.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Deadline:            time.Now().Add(5 * time.Minute),
		Cmds:                scripttest.Commands(),
		UpdateScripts:       *update,
	})
}

// Command child plays the commands the benchmarks run behind a wrapper: the
// same scenarios as the tests' child programs (internal/testchild), named by
// the first argument (or, for the processes a scenario starts itself, by
// testchild.Env).
//
//	child SCENARIO [ARG...]
package main

import (
	"fmt"
	"os"

	"github.com/proxy-await/proxy-await/internal/testchild"
)

func main() {
	if _, ok := os.LookupEnv(testchild.Env); ok {
		testchild.Main()
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: child SCENARIO [ARG...]")
		os.Exit(2)
	}
	os.Setenv(testchild.Env, os.Args[1])
	os.Args = append(os.Args[:1], os.Args[2:]...)
	testchild.Main()
}

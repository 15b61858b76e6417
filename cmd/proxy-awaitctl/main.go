// Command proxy-awaitctl is proxy-await's tool for platform teams: check
// reports the mistakes in Kubernetes manifests that make pods hang, drop
// requests or get killed; inject adopts proxy-await in every pod template;
// policy writes an admission policy that refuses the mistakes. It runs on
// laptops and in CI, never in a pod.
//
// Everything it does is package ctl's; main only exits, with the code ctl
// returns.
package main

import (
	"os"

	"github.com/proxy-await/proxy-await/ctl"
)

func main() {
	os.Exit(ctl.Main(os.Args, os.Environ()))
}

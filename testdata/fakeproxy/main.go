// Command fakeproxy stands in for a sidecar's admin server in `make demo`
// and the kubelet scenarios of e2e/: package internal/fakeproxy says how it
// answers, as each sidecar does.
package main

import "github.com/proxy-await/proxy-await/internal/fakeproxy"

func main() { fakeproxy.Main() }

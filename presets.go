// presets.go: the admin endpoints of each proxy that --proxy names.

package main

import (
	"fmt"
	"strings"
)

// preset is a proxy's admin endpoints.
type preset struct {
	port     int    // default admin port; 0 when --port does not apply
	ready    string // readiness URL, with %d for the port
	shutdown string // shutdown URL, with %d for the port
}

var presets = map[string]preset{
	"linkerd": {port: 4191, ready: "http://127.0.0.1:%d/ready", shutdown: "http://127.0.0.1:%d/shutdown"},
	"istio":   {ready: "http://127.0.0.1:15021/healthz/ready", shutdown: "http://127.0.0.1:15020/quitquitquit"},
	"envoy":   {port: 15000, ready: "http://127.0.0.1:%d/ready", shutdown: "http://127.0.0.1:%d/quitquitquit"},
	"none":    {},
}

func presetURL(format string, port int) string {
	if strings.Contains(format, "%d") {
		return fmt.Sprintf(format, port)
	}
	return format
}

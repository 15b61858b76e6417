// envoy.go: Envoy on its own, as envoyproxy/envoy's documentation describes
// its admin API.

package proxies

var envoy = Proxy{
	Name:   "Envoy",
	Preset: "envoy",
	// Envoy has no default admin port: the preset's is 15000, the one Istio
	// gives its Envoy; Envoy's own documentation uses 9901.
	Ready:        Endpoint{Port: 15000, Path: "/ready"},        // docs/root/operations/admin.rst: GET /ready
	Shutdown:     Endpoint{Port: 15000, Path: "/quitquitquit"}, // docs/root/operations/admin.rst: POST /quitquitquit
	AdminPort:    true,
	PortInConfig: true, // its admin listener is in its configuration, not in the manifest

	Images:    []string{"envoyproxy/envoy"}, // docs/root/start/install.rst, the pre-built Docker images
	StoppedBy: []Command{{Program: "scuttle"}},
	// Istio's and Consul's sidecars run an Envoy, whose admin API the envoy
	// preset reaches on the port it is given.
	Reaches: []*Proxy{&istio, &consul},
}

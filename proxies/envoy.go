// envoy.go: Envoy on its own, as its admin API answers.

package proxies

// Envoy on its own: envoyproxy/envoy's documentation. Its admin port is in
// its configuration, not in the manifest.
var envoy = Proxy{
	Name:   "Envoy",
	Preset: "envoy",
	// Envoy has no default admin port: the preset's is 15000, the one Istio
	// gives its Envoy (Envoy's own documentation uses 9901).
	Ready: Endpoint{
		Port: 15000,
		Path: "/ready", // docs/root/operations/admin.rst: GET /ready
		// The server's state, 200 when it is LIVE, 503 otherwise.
		OK:       Answer{Status: 200, Body: "LIVE\n"},
		NotReady: Answer{Status: 503, Body: "PRE_INITIALIZING\n"},
	},
	Shutdown: Endpoint{
		Port:        15000,
		Path:        "/quitquitquit", // docs/root/operations/admin.rst: POST /quitquitquit
		OK:          Answer{Status: 200, Body: "OK\n"},
		WrongMethod: Answer{Status: 405, Body: "method not allowed\n"},
	},
	AdminPort:    true,
	PortInConfig: true,

	Images:    []string{"envoyproxy/envoy"}, // docs/root/start/install.rst, the pre-built Docker images
	StoppedBy: []Command{{Program: "scuttle"}},
	Processes: []string{"envoy"},
	// Istio's and Consul's sidecars run an Envoy, whose admin API the envoy
	// preset reaches on the port where each serves it: the preset's own
	// for Istio's, --port 19000 for consul-dataplane's.
	Reaches: []Reach{{&istio, istioEnvoyAdmin}, {&consul, consulEnvoyAdmin}},

	// Ingress and Gateway API controllers whose pods run Envoy as the
	// workload: Contour's envoy DaemonSet runs it beside its
	// shutdown-manager, the contour image (projectcontour/contour
	// examples/contour/03-envoy.yaml); Envoy Gateway's proxy Deployment
	// beside its shutdown-manager, the gateway image (envoyproxy/gateway
	// internal/infrastructure/kubernetes/proxy/testdata/deployments/
	// default.yaml); Emissary-ingress's image runs Envoy itself
	// (emissary-ingress/emissary, its ambassador container).
	Gateways: []Gateway{
		{Name: "Contour", Images: []string{"projectcontour/contour"}},
		{Name: "Envoy Gateway", Images: []string{"envoyproxy/gateway", "envoyproxy/gateway-dev"}},
		{Name: "Emissary-ingress", Images: []string{"emissaryingress/emissary", "datawire/emissary", "datawire/ambassador", "datawire/aes"}, Proxy: true},
	},
}

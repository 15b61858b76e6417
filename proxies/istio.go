// istio.go: Istio's sidecar (pilot-agent and Envoy) as its injector adds
// it, istio/istio at 1.27.0 unless a line says otherwise.

package proxies

import "time"

var istio = Proxy{
	Name:     "Istio",
	Preset:   "istio",
	Ready:    Endpoint{Port: 15021, Path: "/healthz/ready"}, // manifests/charts/istio-control/istio-discovery/files/injection-template.yaml readinessProbe
	Shutdown: Endpoint{Port: 15020, Path: "/quitquitquit"},  // values.yaml global.proxy.statusPort; pilot/cmd/pilot-agent/status/server.go quitPath (loopback only)

	Images:     []string{"/proxyv2"},    // istio-discovery/values.yaml global.proxy.image
	Containers: []string{"istio-proxy"}, // injection-template.yaml
	Inject: Injection{
		Key: "sidecar.istio.io/inject", // a label (or the deprecated annotation): pkg/kube/inject/inject.go
		On:  []string{"true"},          //
		Off: []string{"false"},         //
		// The namespace labels that inject (istio-discovery/templates/mutatingwebhook.yaml).
		Namespace: []Label{{Key: "istio-injection", On: "enabled", Off: "disabled"}, {Key: "istio.io/rev"}},
		// A pod or namespace label that Istio's ambient mode serves without
		// a sidecar (pkg/config/constants DataplaneModeAmbient; istio/api
		// label istio.io/dataplane-mode).
		Sidecarless: Mode{Key: "istio.io/dataplane-mode", Value: "ambient", Why: "Istio's mode without sidecars"},
	},
	Mesh: true,
	Native: Native{
		Keys: []NativeKey{{Key: "sidecar.istio.io/nativeSidecar"}}, // pkg/kube/inject/inject.go: it wins over the mesh's setting
		// pilot/pkg/features/pilot.go: ENABLE_NATIVE_SIDECARS=auto from 1.27
		// (false in 1.26), native when the kubelets are 1.33 or later
		// (pkg/kube/inject/webhook.go DetectNativeSidecar).
		Since:     Version{Major: 1, Minor: 27},
		KubeSince: Version{Major: 1, Minor: 33},
	},

	ShutdownPortKey: "status.sidecar.istio.io/port", // injection-template.yaml

	// pkg/config/mesh/mesh.go DefaultProxyConfig: after SIGTERM the agent
	// drains for terminationDrainDuration, then stops Envoy
	// (pkg/envoy/agent.go); a mesh-wide defaultConfig is not in a manifest.
	// A native sidecar's preStop starts a graceful drain at once
	// (injection-template.yaml "pilot-agent request POST drain",
	// pkg/envoy/agent.go DrainNow), and Envoy closes its inbound listeners
	// after drainDuration (pkg/envoy/proxy.go --drain-time-s; default 45s,
	// pkg/config/mesh/mesh.go). Both are set in proxy.istio.io/config.
	Stop: Stop{
		Key:           "proxy.istio.io/config",
		Field:         "terminationDrainDuration",
		Default:       5 * time.Second,
		NativeField:   "drainDuration",
		NativeDefault: 45 * time.Second,
	},
	StoppedBy: []Command{
		{Program: "pilot-agent", Path: true}, // pilot-agent request POST quitquitquit
		{Program: "scuttle"},                 // kvij/scuttle: it POSTs pilot-agent's /quitquitquit when its command exits
	},
}

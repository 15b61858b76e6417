// istio.go: Istio's sidecar (pilot-agent and its Envoy), as its injector
// adds it.

package proxies

import "time"

// istioEnvoyAdmin is where the Envoy of Istio's sidecar serves its admin
// API: pkg/config/mesh/mesh.go DefaultProxyConfig ProxyAdminPort.
const istioEnvoyAdmin = 15000

// Istio: istio/istio at 1.27.0 unless a line says otherwise.
var istio = Proxy{
	Name:   "Istio",
	Preset: "istio",
	Ready: Endpoint{
		Port:     15021,            // injection-template.yaml readinessProbe
		Path:     "/healthz/ready", //
		OK:       Answer{Status: 200, Body: "ready\n"},
		NotReady: Answer{Status: 503, Body: "not ready\n"},
	},
	Shutdown: Endpoint{
		Port:        15020,           // values.yaml global.proxy.statusPort
		Path:        "/quitquitquit", // pilot/cmd/pilot-agent/status/server.go quitPath: POST, loopback clients only
		OK:          Answer{Status: 200},
		WrongMethod: Answer{Status: 405, Body: "method not allowed\n"},
	},

	Images:     []string{"/proxyv2"},    // manifests/charts/istio-control/istio-discovery/values.yaml global.proxy.image
	Containers: []string{"istio-proxy"}, // istio-discovery/files/injection-template.yaml
	Inject: Injection{
		// pkg/kube/inject/inject.go injectRequired: the label, else the
		// deprecated annotation, exactly "true" or "false".
		Key:    "sidecar.istio.io/inject",
		On:     []string{"true"},
		Off:    []string{"false"},
		Labels: true,
		// The namespace labels that inject Istio's sidecar
		// (istio-discovery/templates/mutatingwebhook.yaml).
		Namespace: []Label{{Key: "istio-injection", On: "enabled", Off: "disabled"}, {Key: "istio.io/rev"}},
		// The label of a pod or namespace that Istio's ambient mode serves
		// without a sidecar (pkg/config/constants DataplaneModeAmbient;
		// istio/api label istio.io/dataplane-mode).
		Sidecarless: Mode{Key: "istio.io/dataplane-mode", Value: "ambient", Why: "Istio's mode without sidecars"},
	},
	Mesh: true,
	Native: Native{
		Keys:  []NativeKey{{Key: "sidecar.istio.io/nativeSidecar"}},      // pkg/kube/inject/inject.go: it wins over the mesh's setting
		Reads: Boolean{True: []string{"true"}, False: []string{"false"}}, // ... exactly "true" or "false"
		// pilot/pkg/features/pilot.go: ENABLE_NATIVE_SIDECARS=auto from 1.27
		// (false in 1.26), native when the kubelets are 1.33 or later
		// (pkg/kube/inject/webhook.go DetectNativeSidecar).
		Since:     Version{Major: 1, Minor: 27},
		KubeSince: Version{Major: 1, Minor: 33},
		// ENABLE_NATIVE_SIDECARS=true or false overrides the default (a
		// boolean in pilot/pkg/features/experimental.go up to 1.26; true,
		// false or auto from 1.27).
		Mesh: "istiod's ENABLE_NATIVE_SIDECARS",
	},

	ShutdownPortKey: "status.sidecar.istio.io/port", // injection-template.yaml

	Stop: Stop{
		// pkg/config/mesh/mesh.go DefaultProxyConfig: after SIGTERM the agent
		// drains for terminationDrainDuration, then stops Envoy
		// (pkg/envoy/agent.go); a mesh-wide defaultConfig is not in a manifest.
		Key:     "proxy.istio.io/config",
		Field:   "terminationDrainDuration",
		Default: 5 * time.Second,
		// How long a native Istio sidecar keeps its inbound
		// listeners after the pod is deleted: its preStop starts a graceful drain
		// at once (injection-template.yaml "pilot-agent request POST drain",
		// pkg/envoy/agent.go DrainNow), and Envoy closes the listeners after
		// drainDuration (pkg/envoy/proxy.go --drain-time-s; default 45s,
		// pkg/config/mesh/mesh.go), set in proxy.istio.io/config.
		NativeField:   "drainDuration",
		NativeDefault: 45 * time.Second,
	},
	// pilot/docker/Dockerfile.proxyv2: ENTRYPOINT pilot-agent, which runs
	// Envoy and exits when it is killed.
	Processes: []string{"pilot-agent"},
	StoppedBy: []Command{
		{Program: "pilot-agent", Path: true}, // pilot-agent request POST quitquitquit, to its own status port
		{Program: "scuttle"},                 // scuttle POSTs pilot-agent's /quitquitquit when its command exits
	},

	// istio/istio 1.30.3:
	// manifests/charts/istio-control/istio-discovery/files/injection-template.yaml.
	Injected: Injected{
		Release:   "Istio 1.30",
		Init:      &Container{Name: "istio-init", User: 0, Add: []string{"NET_ADMIN", "NET_RAW"}, DropAll: true},
		FixedInit: &Container{Name: "istio-validation", User: 1337, NonRoot: true, DropAll: true},
		Sidecar:   &Container{Name: "istio-proxy", User: 1337, NonRoot: true, DropAll: true},
		Remedy:    "istio-cni (Helm value pilot.cni.enabled: true)",
	},
}

// consul.go: Consul's sidecar, consul-dataplane, as consul-k8s injects it.

package proxies

// consulGracefulPortKey moves consul-dataplane's graceful (shutdown) port.
const consulGracefulPortKey = "consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-port"

// consulEnvoyAdmin is where consul-dataplane's Envoy serves its admin API,
// which the consul preset's readiness probe reaches:
// hashicorp/consul-dataplane's -envoy-admin-bind-port, default 19000, which
// consul-k8s does not change.
const consulEnvoyAdmin = 19000

// Consul: hashicorp/consul-k8s at v1.9 (control-plane/connect-inject and
// charts/consul/values.yaml).
var consul = Proxy{
	Name:   "Consul",
	Preset: "consul",
	Ready: Endpoint{
		Port:     consulEnvoyAdmin,
		Path:     "/ready", // Envoy's, as envoy.go says
		OK:       Answer{Status: 200, Body: "LIVE\n"},
		NotReady: Answer{Status: 503, Body: "PRE_INITIALIZING\n"},
	},
	// values.yaml connectInject.sidecarProxy.lifecycle: defaultGracefulPort
	// 20600 and defaultGracefulShutdownPath, which these annotations move
	// (constants/annotations_and_labels.go).
	Shutdown: Endpoint{
		Port:    20600,
		Path:    "/graceful_shutdown",
		OwnPort: 20300, // consul-dataplane run by hand, its -graceful-port
		// hashicorp/consul-dataplane pkg/consuldp/lifecycle.go: any method
		OK:      Answer{Status: 200},
		Methods: []string{"*"},
	},

	MissingHint: "consul-dataplane serves /graceful_shutdown on its graceful port: 20600 as consul-k8s injects it (the pod annotation " + consulGracefulPortKey + " moves it), " +
		"or 20300, consul-dataplane's own default; give the port it uses with --shutdown-url http://" + Host + ":PORT/graceful_shutdown",

	Images:     []string{"/consul-dataplane"}, // values.yaml global.imageConsulDataplane
	Containers: []string{"consul-dataplane"},  // webhook/mesh_webhook.go sidecarContainer
	// webhook/mesh_webhook.go shouldInject: the pod's annotation
	// (constants/annotations_and_labels.go AnnotationInject), read with
	// strconv.ParseBool.
	Inject: Injection{
		Key:           "consul.hashicorp.com/connect-inject",
		On:            goTrue,
		Off:           goFalse,
		FromNamespace: true,
	},
	Mesh: true,
	// hashicorp/consul-k8s#4678, in v1.9.0 and backported to v1.6.9, v1.7.5
	// and v1.8.2 (their CHANGELOG.md); values.yaml
	// dataplaneAsSidecarInitContainer.defaultEnabled: false.
	// lifecycle/lifecycle_configuration.go EnableConsulDataplaneAsSidecar:
	// strconv.ParseBool.
	// ... whose default is the webhook's
	// -default-enable-consul-dataplane-as-sidecar, from the Helm value
	// (templates/connect-inject-deployment.yaml).
	Native: Native{Keys: []NativeKey{{Key: "consul.hashicorp.com/enable-consul-dataplane-as-sidecar"}}, Reads: Boolean{True: goTrue, False: goFalse},
		Mesh: "the Helm value connectInject.dataplaneAsSidecarInitContainer.defaultEnabled"},

	// webhook/consul_dataplane_sidecar.go: /usr/local/bin/consul-dataplane.
	Processes: []string{"consul-dataplane"},

	ShutdownPortKey: consulGracefulPortKey,
	ShutdownPathKey: "consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-shutdown-path",
	ShutdownSwitch: Switch{
		Key:   "consul.hashicorp.com/enable-sidecar-proxy-lifecycle", // lifecycle.defaultEnabled: true
		Turns: "consul-dataplane's lifecycle endpoints",
	},

	// consul-k8s v2.0.3: control-plane/connect-inject/webhook/container_init.go
	// (transparent proxy, on by default) and consul_dataplane_sidecar.go.
	Injected: Injected{
		Release:   "consul-k8s 2.0",
		Init:      &Container{Name: "consul-connect-inject-init", User: 0, Add: []string{"NET_ADMIN"}},
		FixedInit: &Container{Name: "consul-connect-inject-init", User: 5996, NonRoot: true, DropAll: true},
		Sidecar:   &Container{Name: "consul-dataplane", User: 5995, NonRoot: true, DropAll: true},
		Remedy:    "the Consul CNI plugin (Helm value connectInject.cni.enabled: true)",
	},
}

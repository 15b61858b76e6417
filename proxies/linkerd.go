// linkerd.go: Linkerd's proxy, as its injector adds it and as its admin
// server answers.

package proxies

// linkerdShutdown is the annotation that turns the proxy's shutdown
// endpoint on, and the value that does.
const (
	linkerdShutdown   = "config.linkerd.io/proxy-admin-shutdown" // pkg/k8s/labels.go ProxyAdminShutdownAnnotation, added in 2.16
	linkerdShutdownOn = "enabled"                                // pkg/inject/inject.go: enabled or disabled
)

// linkerdNotEnabled is the hint for a shutdown endpoint that is switched
// off, as Linkerd's is by default.
const linkerdNotEnabled = "if the proxy runs as a native sidecar, drop -S: the kubelet stops it after the app; " +
	"otherwise enable the endpoint (Linkerd: annotation " + linkerdShutdown + ": " + linkerdShutdownOn + ", " +
	"or the Helm value proxy.enableShutdownEndpoint=true)"

// Linkerd: linkerd/linkerd2 at version-2.20 unless a line says otherwise.
var linkerd = Proxy{
	Name:   "Linkerd",
	Preset: "linkerd",
	Ready: Endpoint{
		Port: 4191,     // values.yaml proxy.ports.admin
		Path: "/ready", // charts/partials/templates/_proxy.tpl readinessProbe
		// linkerd/linkerd2-proxy linkerd/app/admin/src/server.rs
		OK:       Answer{Status: 200, Body: "ready\n"},
		NotReady: Answer{Status: 503, Body: "not ready\n"},
	},
	Shutdown: Endpoint{
		Port:        4191,        // the admin port
		Path:        "/shutdown", // linkerd/linkerd2-proxy linkerd/app/admin/src/server.rs: POST, loopback clients only
		OK:          Answer{Status: 200, Body: "shutdown\n"},
		WrongMethod: Answer{Status: 405, Body: "method not allowed\n"},
	},
	AdminPort: true,

	MissingHint: linkerdNotEnabled,
	// linkerd/linkerd2-proxy linkerd/app/admin/src/server.rs, the endpoint
	// off: a loopback client's POST gets this answer.
	Off: Answer{Status: 404, Body: "shutdown endpoint is not enabled", Hint: linkerdNotEnabled},

	Images:     []string{"linkerd/proxy"}, // charts/linkerd-control-plane/values.yaml proxy.image.name: cr.l5d.io/linkerd/proxy
	Containers: []string{"linkerd-proxy"}, // pkg/k8s/labels.go ProxyContainerName
	Inject: Injection{
		// pkg/k8s/labels.go ProxyInjectAnnotation, on the pod or its
		// namespace; pkg/inject/report.go reads the annotations alone.
		Key:           "linkerd.io/inject",
		On:            []string{"enabled", "ingress"}, // ProxyInjectEnabled, ProxyInjectIngress
		Off:           []string{"disabled"},           // ProxyInjectDisabled
		FromNamespace: true,
	},
	Mesh: true,
	// pkg/inject/inject.go, namespace annotations as the pod's defaults.
	NamespaceKeys: []string{"config.linkerd.io/", "config.alpha.linkerd.io/", "config.beta.linkerd.io/"},
	Native: Native{
		// Each release reads the spellings of its own and the releases before:
		// config.alpha. from 2.15 (the first with native sidecars), config.beta.
		// from 2.19 (edge-25.10.2 release notes: the alpha spelling deprecated,
		// "although that will continue to function"), config.linkerd.io/ from
		// 2.20 (linkerd/linkerd2#15267, the beta spelling deprecated), whose
		// pkg/inject/inject.go reads the three in this order. On the pod or, as
		// every config.* annotation, on its Namespace.
		Keys: []NativeKey{
			{"config.linkerd.io/proxy-enable-native-sidecar", []Span{{From: Version{Major: 2, Minor: 20}}}},
			{"config.beta.linkerd.io/proxy-enable-native-sidecar", []Span{{From: Version{Major: 2, Minor: 19}}}},
			{"config.alpha.linkerd.io/proxy-enable-native-sidecar", []Span{{From: Version{Major: 2, Minor: 15}}}},
		},
		Reads: Boolean{True: goTrue, False: goFalse}, // pkg/inject/inject.go: strconv.ParseBool
		Since: Version{Major: 2, Minor: 20},          // values.yaml proxy.nativeSidecar: true from 2.20 (false in 2.19), linkerd/linkerd2#15267
		Mesh:  "the Helm value proxy.nativeSidecar",
	},

	AdminPortKey: "config.linkerd.io/admin-port", // pkg/k8s/labels.go ProxyAdminPortAnnotation
	ShutdownSwitch: Switch{
		Key:      linkerdShutdown,
		On:       linkerdShutdownOn,
		OffSince: Version{Major: 2, Minor: 16}, // values.yaml proxy.enableShutdownEndpoint: false from version-2.16; 2.15's chart sets nothing and the endpoint is on
	},

	// pkg/k8s/labels.go ProxyWaitBeforeExitSecondsAnnotation, values.yaml
	// waitBeforeExitSeconds: 0; a preStop sleep on the proxy. With a native
	// sidecar it is refused (_proxy.tpl "cannot be used simultaneously",
	// 2.15 to 2.19) or ignored (2.20).
	Stop: Stop{
		Key:        "config.alpha.linkerd.io/proxy-wait-before-exit-seconds",
		Seconds:    true,
		Default:    0,
		ByInjector: true,
	},
	// Dockerfile.proxy: linkerd2-proxy-identity, which execs
	// /usr/lib/linkerd/linkerd2-proxy.
	Processes: []string{"linkerd2-proxy"},
	// linkerd-await --shutdown (-S) POSTs the proxy's /shutdown once its
	// command exits.
	StoppedBy: []Command{{Program: "linkerd-await", Words: []string{"--shutdown", "-S"}}},

	// charts/partials/templates/_proxy-init.tpl, _network-validator.tpl and
	// _proxy.tpl; pkg/inject/inject.go gives the proxy the first
	// container's capabilities.
	Injected: Injected{
		Release:            "Linkerd 2.20",
		Init:               &Container{Name: "linkerd-init", User: 65534, NonRoot: true, Add: []string{"NET_ADMIN", "NET_RAW"}},
		FixedInit:          &Container{Name: "linkerd-network-validator", User: 65534, NonRoot: true, DropAll: true},
		Sidecar:            &Container{Name: "linkerd-proxy", User: 2102, NonRoot: true},
		CopiesCapabilities: true,
		Remedy:             "linkerd-cni (Helm value cniEnabled: true)",
	},
}

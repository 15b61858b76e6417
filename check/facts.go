// facts.go: what each proxy's injector and the proxy itself do, one table
// per proxy, with the upstream file (or page) and release each fact was read
// from beside it. A proxy's next release that changes a default is a change
// of one line here.
//
// The tables are composite literals of constants: nothing here runs when
// proxy-await starts.

package check

import (
	"time"

	"github.com/proxy-await/proxy-await/config"
)

// proxy is what --check knows of one proxy. A zero field is a fact that
// does not apply to that proxy.
type proxy struct {
	name       string   // as messages name it
	preset     string   // the --proxy preset that waits for it and shuts it down
	images     []string // image repositories, matched by the end of their path
	containers []string // the container names its injector gives it

	inject    string   // the pod annotation (or label) that asks for the sidecar
	injectOn  []string // its values that inject
	injectOff []string // its values that keep the sidecar out
	podOnly   bool     // only the pod's annotation injects: without it, no sidecar
	mesh      bool     // a service mesh: a pod has one at most

	nativeKeys      []nativeKey    // pod annotations that choose a native sidecar (true/false), the most binding first
	nativeSince     config.Version // the release from which the sidecar is native by default
	nativeKubeSince config.Version // ... when the cluster's Kubernetes is this release or later

	readyPort     int    // where the preset waits: port and path
	readyPath     string //
	adminPortKey  string // the annotation that moves the ready and shutdown port
	shutdownPort  int    // where the preset POSTs: port and path
	shutdownPath  string //
	shutdownPorts string // the annotation that moves the shutdown port alone

	shutdownKey      string         // the annotation that turns the shutdown endpoint on
	shutdownOn       string         // ... with this value
	shutdownOffSince config.Version // the release from which it is off unless turned on

	// How long the sidecar keeps taking new connections after the kubelet's
	// SIGTERM (a classic sidecar gets it when the pod is deleted).
	stopKey     string        // the annotation that sets it
	stopDefault time.Duration // its default
}

// nativeKey is an annotation that chooses a native sidecar, and the
// releases that read it; none listed: every release that has it.
type nativeKey struct {
	key   string
	reads []span
}

// span is the releases from one up to (not including) another; a zero to
// is every later release.
type span struct{ from, to config.Version }

// readBy says whether release r reads the annotation.
func (k nativeKey) readBy(r config.Version) bool {
	if len(k.reads) == 0 {
		return true
	}
	for _, s := range k.reads {
		if r.AtLeast(s.from) && (s.to == (config.Version{}) || !r.AtLeast(s.to)) {
			return true
		}
	}
	return false
}

// The proxies in the order findings name them.
var proxies = []*proxy{&linkerd, &istio, &dapr, &consul, &cloudsql, &envoy}

// Linkerd: linkerd/linkerd2 at version-2.20 unless a line says otherwise.
var linkerd = proxy{
	name:       "Linkerd",
	preset:     "linkerd",
	images:     []string{"linkerd/proxy"},      // charts/linkerd-control-plane/values.yaml proxy.image.name: cr.l5d.io/linkerd/proxy
	containers: []string{"linkerd-proxy"},      // pkg/k8s/labels.go ProxyContainerName
	inject:     "linkerd.io/inject",            // pkg/k8s/labels.go ProxyInjectAnnotation, on the pod or its namespace
	injectOn:   []string{"enabled", "ingress"}, // ProxyInjectEnabled, ProxyInjectIngress
	injectOff:  []string{"disabled"},           // ProxyInjectDisabled
	mesh:       true,
	// Each release reads the spellings of its own and the releases before:
	// config.alpha. from 2.15 (the first with native sidecars), config.beta.
	// from 2.19 (edge-25.10.2 release notes: the alpha spelling deprecated,
	// "although that will continue to function"), config.linkerd.io/ from
	// 2.20 (linkerd/linkerd2#15267, the beta spelling deprecated), whose
	// pkg/inject/inject.go reads the three in this order. On the pod or, as
	// every config.* annotation, on its Namespace.
	nativeKeys: []nativeKey{
		{"config.linkerd.io/proxy-enable-native-sidecar", []span{{from: config.Version{Major: 2, Minor: 20}}}},
		{"config.beta.linkerd.io/proxy-enable-native-sidecar", []span{{from: config.Version{Major: 2, Minor: 19}}}},
		{"config.alpha.linkerd.io/proxy-enable-native-sidecar", []span{{from: config.Version{Major: 2, Minor: 15}}}},
	},
	nativeSince:      config.Version{Major: 2, Minor: 20},      // values.yaml proxy.nativeSidecar: true from 2.20 (false in 2.19), linkerd/linkerd2#15267
	readyPort:        4191,                                     // values.yaml proxy.ports.admin
	readyPath:        "/ready",                                 // charts/partials/templates/_proxy.tpl readinessProbe
	adminPortKey:     "config.linkerd.io/admin-port",           // pkg/k8s/labels.go ProxyAdminPortAnnotation
	shutdownPort:     4191,                                     // the admin port
	shutdownPath:     "/shutdown",                              // linkerd/linkerd2-proxy linkerd/app/admin/src/server.rs: POST, loopback clients only
	shutdownKey:      "config.linkerd.io/proxy-admin-shutdown", // pkg/k8s/labels.go ProxyAdminShutdownAnnotation, added in 2.16
	shutdownOn:       "enabled",                                // pkg/inject/inject.go: enabled or disabled
	shutdownOffSince: config.Version{Major: 2, Minor: 16},      // values.yaml proxy.enableShutdownEndpoint: false from version-2.16; 2.15's chart sets nothing and the endpoint is on
	// pkg/k8s/labels.go ProxyWaitBeforeExitSecondsAnnotation, values.yaml
	// waitBeforeExitSeconds: 0; a preStop sleep on the proxy. With a native
	// sidecar it is refused (_proxy.tpl "cannot be used simultaneously",
	// 2.15 to 2.19) or ignored (2.20).
	stopKey:     "config.alpha.linkerd.io/proxy-wait-before-exit-seconds",
	stopDefault: 0,
}

// Istio: istio/istio at 1.27.0 unless a line says otherwise.
var istio = proxy{
	name:       "Istio",
	preset:     "istio",
	images:     []string{"/proxyv2"},      // manifests/charts/istio-control/istio-discovery/values.yaml global.proxy.image
	containers: []string{"istio-proxy"},   // istio-discovery/files/injection-template.yaml
	inject:     "sidecar.istio.io/inject", // a label (or the deprecated annotation): pkg/kube/inject/inject.go
	injectOn:   []string{"true"},          //
	injectOff:  []string{"false"},         //
	mesh:       true,
	nativeKeys: []nativeKey{{key: "sidecar.istio.io/nativeSidecar"}}, // pkg/kube/inject/inject.go: it wins over the mesh's setting
	// pilot/pkg/features/pilot.go: ENABLE_NATIVE_SIDECARS=auto from 1.27
	// (false in 1.26), native when the kubelets are 1.33 or later
	// (pkg/kube/inject/webhook.go DetectNativeSidecar).
	nativeSince:     config.Version{Major: 1, Minor: 27},
	nativeKubeSince: config.Version{Major: 1, Minor: 33},
	readyPort:       15021,                          // injection-template.yaml readinessProbe
	readyPath:       "/healthz/ready",               //
	shutdownPort:    15020,                          // values.yaml global.proxy.statusPort
	shutdownPath:    "/quitquitquit",                // pilot/cmd/pilot-agent/status/server.go quitPath
	shutdownPorts:   "status.sidecar.istio.io/port", // injection-template.yaml
	// pkg/config/mesh/mesh.go DefaultProxyConfig: after SIGTERM the agent
	// drains for terminationDrainDuration, then stops Envoy
	// (pkg/envoy/agent.go); a mesh-wide defaultConfig is not in a manifest.
	stopKey:     "proxy.istio.io/config",
	stopDefault: 5 * time.Second,
}

// istioNativeDrain is how long a native Istio sidecar keeps its inbound
// listeners after the pod is deleted: its preStop starts a graceful drain
// at once (injection-template.yaml "pilot-agent request POST drain",
// pkg/envoy/agent.go DrainNow), and Envoy closes the listeners after
// drainDuration (pkg/envoy/proxy.go --drain-time-s; default 45s,
// pkg/config/mesh/mesh.go), set in proxy.istio.io/config.
const istioNativeDrain = 45 * time.Second

// istioAmbient is the label of a pod or namespace that Istio's ambient mode
// serves without a sidecar (pkg/config/constants DataplaneModeAmbient;
// istio/api label istio.io/dataplane-mode).
const istioAmbient = "istio.io/dataplane-mode"

// istioNamespaceInject are the namespace labels that inject Istio's sidecar
// (istio-discovery/templates/mutatingwebhook.yaml).
const istioNamespaceInject, istioRevision = "istio-injection", "istio.io/rev"

// Dapr: dapr/dapr at v1.18.3.
var dapr = proxy{
	name:         "Dapr",
	preset:       "dapr",
	images:       []string{"/daprd"},                                  // daprio/daprd, ghcr.io/dapr/daprd
	containers:   []string{"daprd"},                                   // pkg/injector/consts/consts.go SidecarContainerName
	inject:       "dapr.io/enabled",                                   // pkg/injector/patcher/sidecar.go
	injectOn:     []string{"true"},                                    //
	injectOff:    []string{"false"},                                   //
	podOnly:      true,                                                // pkg/injector/patcher/sidecar_patcher.go NeedsPatching: the pod's annotation, nothing else
	nativeKeys:   []nativeKey{{key: "dapr.io/enable-native-sidecar"}}, // sidecar.go, from 1.18; the chart's nativeSidecar default is false
	readyPort:    3500,                                                // sidecar.go SidecarHTTPPort, no annotation moves it
	readyPath:    "/v1.0/healthz/outbound",                            //
	shutdownPort: 3500,                                                //
	shutdownPath: "/v1.0/shutdown",                                    // always on
	stopKey:      "dapr.io/graceful-shutdown-seconds",                 // sidecar.go; pkg/runtime/config.go DefaultGracefulShutdownDuration
	stopDefault:  5 * time.Second,                                     //
}

// daprBlockShutdown holds daprd's shutdown for its duration before the
// graceful period starts (sidecar.go, cmd/daprd/options/options.go).
const daprBlockShutdown = "dapr.io/block-shutdown-duration"

// Consul: hashicorp/consul-k8s at v1.9 (control-plane/connect-inject and
// charts/consul/values.yaml).
var consul = proxy{
	name:       "Consul",
	preset:     "consul",
	images:     []string{"/consul-dataplane"},         // values.yaml global.imageConsulDataplane
	containers: []string{"consul-dataplane"},          // webhook/mesh_webhook.go sidecarContainer
	inject:     "consul.hashicorp.com/connect-inject", // constants/annotations_and_labels.go AnnotationInject
	injectOn:   []string{"true"},                      //
	injectOff:  []string{"false"},                     //
	mesh:       true,
	// hashicorp/consul-k8s#4678, in v1.9.0 and backported to v1.6.9, v1.7.5
	// and v1.8.2 (their CHANGELOG.md); values.yaml
	// dataplaneAsSidecarInitContainer.defaultEnabled: false.
	nativeKeys: []nativeKey{{key: "consul.hashicorp.com/enable-consul-dataplane-as-sidecar"}},
	readyPort:  19000,    // consul-dataplane's Envoy admin port
	readyPath:  "/ready", //
	// values.yaml connectInject.sidecarProxy.lifecycle: defaultGracefulPort
	// 20600 and defaultGracefulShutdownPath, which these annotations move
	// (constants/annotations_and_labels.go).
	shutdownPort:  20600,
	shutdownPath:  "/graceful_shutdown",
	shutdownPorts: "consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-port",
	shutdownKey:   "consul.hashicorp.com/enable-sidecar-proxy-lifecycle", // lifecycle.defaultEnabled: true
}

// consulShutdownPathKey moves consul-dataplane's shutdown path.
const consulShutdownPathKey = "consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-shutdown-path"

// The Cloud SQL Auth Proxy v2: GoogleCloudPlatform/cloud-sql-proxy at
// v2.25.3, cmd/root.go. It is a container of the manifest, never injected;
// its flags say what it serves.
var cloudsql = proxy{
	name:         "Cloud SQL Auth Proxy",
	preset:       "cloudsql",
	images:       []string{"cloud-sql-connectors/cloud-sql-proxy"}, // README.md
	readyPort:    9090,                                             // --http-port
	readyPath:    "/startup",                                       // with --health-check
	shutdownPort: 9091,                                             // --admin-port
	shutdownPath: "/quitquitquit",                                  // with --quitquitquit
}

// cloudsqlV1 is the image of the Cloud SQL proxy v1 (migration-guide.md),
// which has no --quitquitquit, and serves /startup on 8090 with
// -use_http_health_check, not on 9090.
const cloudsqlV1 = "cloudsql-docker/gce-proxy"

// cloudsqlEnv is the prefix of the variables that set cloud-sql-proxy's
// flags (cmd/root.go envPrefix, with - as _).
const cloudsqlEnv = "CSQL_PROXY_"

// Envoy on its own: envoyproxy/envoy's documentation. Its admin port is in
// its configuration, not in the manifest.
var envoy = proxy{
	name:         "Envoy",
	preset:       "envoy",
	images:       []string{"envoyproxy/envoy"}, // docs/root/start/install.rst, the pre-built Docker images
	readyPath:    "/ready",                     // docs/root/operations/admin.rst: GET /ready
	shutdownPath: "/quitquitquit",              // docs/root/operations/admin.rst: POST /quitquitquit
}

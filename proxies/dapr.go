// dapr.go: Dapr's sidecar, daprd, as its injector adds it.

package proxies

import "time"

// daprTruthy are the values that dapr/kit's strings.IsTruthy reads as
// true, once trimmed and in lower case.
var daprTruthy = []string{"true", "t", "yes", "y", "on", "1"}

// Dapr: dapr/dapr at v1.18.3.
var dapr = Proxy{
	Name:   "Dapr",
	Preset: "dapr",
	Ready: Endpoint{
		Port: 3500,                     // sidecar.go SidecarHTTPPort, no annotation moves it
		Path: "/v1.0/healthz/outbound", //
		// pkg/api/http/healthz.go
		OK:       Answer{Status: 204},
		NotReady: Answer{Status: 500, Body: `{"errorCode":"ERR_HEALTH_OUTBOUND_NOT_READY","message":"dapr outbound is not ready"}`},
	},
	Shutdown: Endpoint{
		Port:        3500,             //
		Path:        "/v1.0/shutdown", // always on; pkg/api/http/shutdown.go, POST from any client
		OK:          Answer{Status: 204},
		WrongMethod: Answer{Status: 405, Body: "method not allowed\n"},
		AnyClient:   true,
	},

	Images:     []string{"/daprd"}, // daprio/daprd, ghcr.io/dapr/daprd
	Containers: []string{"daprd"},  // pkg/injector/consts/consts.go SidecarContainerName
	// pkg/injector/patcher/sidecar.go: SidecarConfig reads its fields from
	// the pod's annotations alone (setFromAnnotations), a boolean one with
	// dapr/kit's strings.IsTruthy: y, yes, true, t, on or 1, trimmed and in
	// any case, and any other value is false.
	Inject: Injection{
		Key:     "dapr.io/enabled",
		On:      daprTruthy,
		Off:     []string{"false"},
		Fold:    true,
		PodOnly: true, // pkg/injector/patcher/sidecar_patcher.go NeedsPatching: the pod's annotation, nothing else
	},
	Native: Native{
		Keys:  []NativeKey{{Key: "dapr.io/enable-native-sidecar"}}, // sidecar.go EnableNativeSidecar, from 1.18
		Reads: Boolean{True: daprTruthy, Fold: true, Else: true},
		// charts/dapr/charts/dapr_sidecar_injector/values.yaml nativeSidecar:
		// false, the injector's NATIVE_SIDECAR_ENABLED, which the
		// annotation overrides (pkg/injector/service/pod_patch.go).
		Mesh: "the Helm value dapr_sidecar_injector.nativeSidecar",
	},

	Processes: []string{"daprd"}, // sidecar_container.go: the command /daprd
	// dapr/docs operations/hosting/kubernetes/kubernetes-job.md: a Job's
	// application calls the shutdown API, or an SDK's Shutdown().
	AppStops: "the application calls Dapr's shutdown API itself (its SDK's Shutdown())",

	Stop: Stop{
		Key:     "dapr.io/graceful-shutdown-seconds", // sidecar.go; pkg/runtime/config.go DefaultGracefulShutdownDuration
		Seconds: true,                                //
		Default: 5 * time.Second,                     //
		// It holds daprd's shutdown for its duration before the
		// graceful period starts (sidecar.go, cmd/daprd/options/options.go).
		After: "dapr.io/block-shutdown-duration",
	},

	// pkg/injector/patcher/sidecar_container.go and the
	// dapr_sidecar_injector chart's values.yaml.
	Injected: Injected{
		Release:      "Dapr 1.18",
		Sidecar:      &Container{Name: "daprd", User: 65532, NonRoot: true},
		FixedSidecar: &Container{Name: "daprd", User: 65532, NonRoot: true, DropAll: true},
		Remedy:       "the Helm value dapr_sidecar_injector.sidecarDropALLCapabilities=true",
	},
}

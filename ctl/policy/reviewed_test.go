package policy

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/ctl/rules"
)

// checkErrors are the rules of the errors check finds in one object, with
// the releases rel, in the order it reports them.
func checkErrors(t testing.TB, text []byte, rel string) []string {
	t.Helper()
	v := versions(t, rel)
	findings, _ := check.Paths([]string{"-"}, check.Options{Versions: v.versions, Native: v.native, Stdin: bytes.NewReader(text)})
	var out []string
	for _, f := range findings {
		if f.Level == rules.Error && !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	return out
}

// Objects that a review found the policy refusing while check passed them,
// or admitting where check finds an error the object alone decides: the
// policy refuses each for exactly the rules of refused, and check finds
// each of them in it.
func TestReviewedObjects(t *testing.T) {
	for _, tc := range []struct {
		name, rel, object string
		refused           []string
	}{
		// 27s of --term-delay fit the default 30s, unless -S's shutdown
		// timeout is added.
		{name: "--shutdown=false is no -S", object: strings.Replace(broken, "--term-delay, 40s", "--shutdown=false, --term-delay, 27s", 1)},
		{name: "--keep-proxy-on-failure=false is none", refused: []string{"retry-loses-proxy"}, object: istioJob("sync", "OnFailure", "proxy-await, --proxy, istio, -S, --keep-proxy-on-failure=false, --, /sync")},
		{name: "istio-init is no sidecar", object: `
apiVersion: v1
kind: Pod
metadata: {name: istio-injected}
spec:
  initContainers:
    - name: istio-init
      image: docker.io/istio/proxyv2:1.30.3
      args: [istio-iptables, -p, "15001"]
    - name: istio-proxy
      image: docker.io/istio/proxyv2:1.30.3
      args: [proxy, sidecar]
      restartPolicy: Always
    - name: migrate
      image: registry.example.com/migrate:1
      command: [/proxy-await/proxy-await, --proxy, istio, --, /migrate]
  containers:
    - name: reports
      image: registry.example.com/reports:1
      command: [/proxy-await/proxy-await, --proxy, istio, --, /reports]
`},
		{name: "linkerd-network-validator is no sidecar", object: `
apiVersion: batch/v1
kind: Job
metadata: {name: linkerd-cni}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - name: linkerd-network-validator
          image: cr.l5d.io/linkerd/proxy:stable-2.20.0
        - name: linkerd-proxy
          image: cr.l5d.io/linkerd/proxy:stable-2.20.0
          restartPolicy: Always
      containers:
        - name: report
          image: registry.example.com/report:1
          command: [/proxy-await/proxy-await, --proxy-lost, 10s, --, /report]
`},
		{name: "Dapr reads an annotation, not a label", object: `
apiVersion: batch/v1
kind: Job
metadata: {name: dapr-label}
spec:
  template:
    metadata:
      labels: {dapr.io/enabled: "true", dapr.io/app-id: report}
    spec:
      restartPolicy: Never
      containers:
        - name: report
          image: registry.example.com/report:1
          command: [proxy-await, --proxy, none, --, /report]
`},
		{name: "Dapr's true in any case", object: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: orders}
spec:
  selector: {matchLabels: {app: orders}}
  template:
    metadata:
      labels: {app: orders}
      annotations: {dapr.io/enabled: "True", dapr.io/app-id: orders}
    spec:
      containers:
        - name: orders
          image: registry.example.com/orders:1
          command: [proxy-await, --proxy, dapr, --, /orders]
`},
		{name: "two Cloud SQL Auth Proxies: the one that answers decides", object: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: two-instances}
spec:
  selector: {matchLabels: {app: reports}}
  template:
    metadata: {labels: {app: reports}}
    spec:
      containers:
        - name: reports
          image: registry.example.com/reports:1
          command: [proxy-await, --proxy, cloudsql, --, /reports]
        - name: cloud-sql-proxy-archive
          image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0
          args: [--port=5433, "project:region:archive"]
        - name: cloud-sql-proxy
          image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0
          args: [--health-check, --port=5432, "project:region:reports"]
`},
		{name: "-S reaches the Cloud SQL Auth Proxy that takes it", object: `
apiVersion: batch/v1
kind: Job
metadata: {name: one-left}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: export
          image: registry.example.com/export:1
          command: [proxy-await, --proxy, cloudsql, -S, --proxy-lost, 10s, --, /export]
        - name: cloudsql-proxy-v1
          image: gcr.io/cloudsql-docker/gce-proxy:1.37.0
          command: [/cloud_sql_proxy, -instances=project:region:old=tcp:5433]
        - name: cloud-sql-proxy
          image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0
          args: [--health-check, --quitquitquit, --port=5432, "project:region:reports"]
`},
		{name: "a Job's own code may POST the quit endpoint", object: istioJob("export", "Never", "/export, --quit-sidecar")},
		{name: "a Dapr app calls the SDK's Shutdown()", object: `
apiVersion: batch/v1
kind: Job
metadata: {name: dapr-without-s}
spec:
  template:
    metadata:
      annotations: {dapr.io/enabled: "true", dapr.io/app-id: report}
    spec:
      restartPolicy: Never
      containers:
        - name: report
          image: registry.example.com/report:1
          command: [proxy-await, --proxy, dapr, --proxy-lost, 10s, --, /report]
`},
		{name: "bash execs a lone simple command", object: `
apiVersion: v1
kind: Pod
metadata: {name: tool}
spec:
  containers:
    - name: tool
      image: registry.example.com/tool:1
      command: [bash, -c, "proxy-await --proxy none -- /tool --all"]
`},
		{name: "sh may be dash: a warning", object: `
apiVersion: v1
kind: Pod
metadata: {name: tool}
spec:
  containers:
    - name: tool
      image: registry.example.com/tool:1
      command: [/bin/sh, -c, "proxy-await --proxy none -- /tool --all"]
`},
		{name: "dash keeps the shell", refused: []string{"shell-form"}, object: `
apiVersion: v1
kind: Pod
metadata: {name: tool}
spec:
  containers:
    - name: tool
      image: registry.example.com/tool:1
      command: [dash, -c, "proxy-await --proxy none -- /tool --all"]
`},
		{name: "native sidecars for the whole mesh", rel: releasesOf[3], object: istioJob("export", "Never", "proxy-await, --proxy, istio, --proxy-lost, 10s, --, /export")},
		{name: "classic sidecars for the whole mesh", rel: releasesOf[4], refused: []string{"job-never-completes"}, object: istioJob("export", "Never", "proxy-await, --proxy, istio, --proxy-lost, 10s, --, /export")},
		{name: "an init container waits for a native sidecar beside a classic one of its kind", object: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: two-linkerd}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      initContainers:
        - name: linkerd-native
          image: cr.l5d.io/linkerd/proxy:stable-2.20.0
          restartPolicy: Always
        - name: wait
          image: registry.example.com/app:1
          command: [proxy-await, --, /app]
      containers:
        - name: app
          image: registry.example.com/app:1
          command: [/app]
        - name: linkerd-proxy
          image: cr.l5d.io/linkerd/proxy:stable-2.20.0
`},
		{name: "a native sidecar of the application's waits for a classic sidecar without holding the pod's start", object: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: shipper}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, sidecar.istio.io/inject: "true"}}
    spec:
      initContainers:
        - name: log-shipper
          image: registry.example.com/shipper:1
          restartPolicy: Always
          command: [proxy-await, --proxy, istio, --, /ship]
      containers:
        - name: web
          image: registry.example.com/web:1
          command: [proxy-await, --proxy, istio, --, /web]
`},
		{name: "an init container of a proxy's image that runs to its end is no sidecar", object: `
apiVersion: batch/v1
kind: Job
metadata: {name: validate}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - name: validate-config
          image: envoyproxy/envoy:v1.34.0
          command: [envoy, --mode, validate, -c, /config/envoy.yaml]
      containers:
        - name: job
          image: registry.example.com/job:1
          command: [proxy-await, --proxy, none, --, /job]
`},
		{name: "an init container's wait answered by a native sidecar of another kind on the same endpoint", rel: "kubernetes=1.32", object: `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - name: cloud-sql-proxy
          image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.0
          restartPolicy: Always
          args: [--health-check, --port=5432, project:region:old]
        - name: wait
          image: registry.example.com/app:1
          command: [proxy-await, --proxy, alloydb, --, /migrate]
      containers:
        - name: app
          image: registry.example.com/app:1
          command: [/app]
        - name: alloydb-auth-proxy
          image: gcr.io/alloydb-connectors/alloydb-auth-proxy:1.10.0
          args: [--port=5433, "projects/p/locations/r/clusters/c/instances/i"]
`},
		{name: "-S does not reach a Cloud SQL Auth Proxy on another --admin-port", object: `
apiVersion: batch/v1
kind: Job
metadata: {name: moved}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: app
          image: registry.example.com/app:1
          command: [proxy-await, --proxy, cloudsql, -S, --, /app]
        - name: cloud-sql-proxy
          image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0
          args: [--health-check, --quitquitquit, --admin-port=9191, "project:region:db"]
      initContainers:
        - name: envoy
          image: envoyproxy/envoy:v1.34.0
          restartPolicy: Always
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(t, "object.yaml", []byte(tc.object))
			require.Len(t, objs, 1)
			v := compiledFor(t, tc.rel, false).eval(t, objs[0].value)
			require.Empty(t, v.errorsOf)
			assert.Equal(t, tc.refused, v.rules, "%s", v)
			found := checkErrors(t, []byte(tc.object), tc.rel)
			for _, r := range v.rules {
				assert.Contains(t, found, r, "check of the object")
			}
		})
	}
}

package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/config"
)

// broken is a Deployment that breaks grace-period, as one that predates
// the policy may: 40s of --term-delay in the default 30s.
const broken = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: registry.example.com/web:1
          command: [proxy-await, --proxy, none, --term-delay, 40s, --, /web]
`

// objectOf reads one object of text, and changes a copy of it with edit.
func objectOf(t *testing.T, text string, edit func(o map[string]any)) map[string]any {
	t.Helper()
	var o map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(text), &o))
	if o == nil {
		o = map[string]any{}
	}
	if edit != nil {
		edit(o)
	}
	return o
}

// at is the mapping at path in o.
func at(o map[string]any, path ...string) map[string]any {
	for _, k := range path {
		o = o[k].(map[string]any)
	}
	return o
}

// Safe to turn on in a running cluster: what the cluster's controllers
// and clients change besides a pod template's spec is never judged, nor
// anything in Kubernetes' own namespaces, those excluded, or an object
// that opts out; a change of the spec is, and so is every object created.
func TestJudgesOnlyWhatItShould(t *testing.T) {
	c := compile(t, New(&config.Policy{NamespacesExcluded: []string{"batch", "legacy"}}), false)
	old := objectOf(t, broken, nil)
	job := objectOf(t, istioJob("export", "Never", "proxy-await, --proxy, istio, --, /export"), func(o map[string]any) {
		at(o, "metadata")["namespace"] = "shop"
		at(o, "metadata")["finalizers"] = []any{"batch.kubernetes.io/job-tracking"}
	})
	cron := map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "sync", "namespace": "shop"},
		"spec": map[string]any{"schedule": "*/5 * * * *", "jobTemplate": map[string]any{"spec": objectOf(t, istioJob("sync", "Never", "proxy-await, --proxy, istio, --, /sync"), nil)["spec"]}}}
	// pod is a Pod of the broken Deployment's template, its spec changed
	// with edit.
	pod := func(edit func(spec map[string]any)) map[string]any {
		tpl := at(objectOf(t, broken, nil), "spec", "template")
		spec := at(tpl, "spec")
		if edit != nil {
			edit(spec)
		}
		return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "web-1", "namespace": "shop", "labels": at(tpl, "metadata")["labels"]}, "spec": spec}
	}
	for _, tc := range []struct {
		name, operation, namespace string
		obj, old                   map[string]any
		judged                     bool
	}{
		{"created", "CREATE", "shop", old, nil, true},
		{"scaled to 0 by its controller", "UPDATE", "shop", objectOf(t, broken, func(o map[string]any) { at(o, "spec")["replicas"] = 0 }), old, false},
		{"kubectl rollout restart", "UPDATE", "shop", objectOf(t, broken, func(o map[string]any) {
			at(o, "spec", "template", "metadata")["annotations"] = map[string]any{"kubectl.kubernetes.io/restartedAt": "2026-12-07T10:00:00Z"}
		}), old, false},
		{"labelled", "UPDATE", "shop", objectOf(t, broken, func(o map[string]any) { at(o, "metadata")["labels"] = map[string]any{"team": "web"} }), old, false},
		{"its fix rolled out", "UPDATE", "shop", objectOf(t, strings.Replace(broken, "40s", "20s", 1), nil), old, true},
		{"the same spec applied again", "UPDATE", "shop", objectOf(t, broken, nil), old, false},
		{"a finalizer removed", "UPDATE", "shop", objectOf(t, broken, nil), objectOf(t, broken, func(o map[string]any) { at(o, "metadata")["finalizers"] = []any{"example.com/f"} }), false},
		{"a Job's finalizer removed", "UPDATE", "shop", objectOf(t, "", func(o map[string]any) {
			for k, v := range job {
				o[k] = v
			}
			o["metadata"] = map[string]any{"name": "export", "namespace": "shop"}
		}), job, false},
		{"a CronJob suspended", "UPDATE", "shop", objectOf(t, "", func(o map[string]any) {
			for k, v := range cron {
				o[k] = v
			}
			spec := map[string]any{"suspend": true}
			for k, v := range at(cron, "spec") {
				spec[k] = v
			}
			o["spec"] = spec
		}), cron, false},
		{"a suspended Job's scheduling set by its queue", "UPDATE", "shop", objectOf(t, "", func(o map[string]any) {
			for k, v := range job {
				o[k] = v
			}
			o["spec"] = map[string]any{"suspend": false, "template": map[string]any{"metadata": at(job, "spec", "template")["metadata"], "spec": func() map[string]any {
				spec := map[string]any{"nodeSelector": map[string]any{"cloud.google.com/gke-spot": "true"}, "tolerations": []any{map[string]any{"key": "spot", "operator": "Exists"}}}
				for k, v := range at(job, "spec", "template", "spec") {
					spec[k] = v
				}
				return spec
			}()}}
		}), job, false},
		{"a Pod's scheduling gate removed", "UPDATE", "shop", pod(nil), pod(func(spec map[string]any) {
			spec["schedulingGates"] = []any{map[string]any{"name": "example.com/queue"}}
		}), false},
		{"a Pod's image changed", "UPDATE", "shop", pod(nil), pod(func(spec map[string]any) {
			spec["containers"].([]any)[0].(map[string]any)["image"] = "registry.example.com/web:0"
		}), true},
		{"in kube-system", "CREATE", "kube-system", old, nil, false},
		{"in kube-public", "CREATE", "kube-public", old, nil, false},
		{"in kube-node-lease", "CREATE", "kube-node-lease", old, nil, false},
		{"in an excluded namespace", "CREATE", "legacy", old, nil, false},
		{"opted out on the object", "CREATE", "shop", objectOf(t, broken, func(o map[string]any) {
			at(o, "metadata")["annotations"] = map[string]any{"proxy-await.io/inject": "disabled"}
		}), nil, false},
		{"opted out on its pod template", "CREATE", "shop", objectOf(t, broken, func(o map[string]any) {
			at(o, "spec", "template", "metadata")["annotations"] = map[string]any{"proxy-await.io/inject": "disabled"}
		}), nil, false},
		{"opted out on a CronJob's pod template", "CREATE", "shop", objectOf(t, "", func(o map[string]any) {
			for k, v := range cron {
				o[k] = v
			}
			o["spec"] = map[string]any{"schedule": "* * * * *", "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{"proxy-await.io/inject": "disabled"}}, "spec": at(cron, "spec", "jobTemplate", "spec", "template", "spec")}}}}
		}), nil, false},
		{"an annotation of another value", "CREATE", "shop", objectOf(t, broken, func(o map[string]any) {
			at(o, "metadata")["annotations"] = map[string]any{"proxy-await.io/inject": "enabled"}
		}), nil, true},
		{"a Pod's spec changed", "UPDATE", "shop", objectOf(t, strings.Replace(strings.Replace(broken, "kind: Deployment", "kind: Pod", 1), "registry.example.com/web:1", "registry.example.com/web:2", 1), nil),
			objectOf(t, strings.Replace(broken, "kind: Deployment", "kind: Pod", 1), nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.judged, c.judges(t, tc.operation, tc.namespace, tc.obj, tc.old))
		})
	}
	// What is judged is refused as before: the broken Deployment, and a
	// Pod of the same spec.
	assert.Equal(t, []string{"grace-period"}, c.eval(t, old).rules)
}

// The binding warns and audits by default, so that a team sees what the
// policy would refuse before it refuses; --action deny makes it refuse.
func TestActions(t *testing.T) {
	for _, tc := range []struct {
		deny bool
		want []string
	}{{false, []string{"Warn", "Audit"}}, {true, []string{"Deny"}}} {
		docs := yaml.NewDecoder(strings.NewReader(string(New(&config.Policy{Deny: tc.deny}).YAML())))
		var policy, binding struct {
			Kind string
			Spec struct {
				FailurePolicy     string                              `yaml:"failurePolicy"`
				ValidationActions []string                            `yaml:"validationActions"`
				MatchConditions   []struct{ Name, Expression string } `yaml:"matchConditions"`
			}
		}
		require.NoError(t, docs.Decode(&policy))
		require.NoError(t, docs.Decode(&binding))
		assert.Equal(t, "ValidatingAdmissionPolicy", policy.Kind)
		assert.Equal(t, "Ignore", policy.Spec.FailurePolicy)
		assert.Len(t, policy.Spec.MatchConditions, 3)
		assert.Equal(t, "ValidatingAdmissionPolicyBinding", binding.Kind)
		assert.Equal(t, tc.want, binding.Spec.ValidationActions)
	}
}

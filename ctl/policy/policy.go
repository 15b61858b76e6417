// Package policy is proxy-awaitctl policy: a ValidatingAdmissionPolicy and
// its binding, by which the API server refuses a Pod, Deployment,
// StatefulSet, DaemonSet, ReplicaSet, Job or CronJob that one of check's
// errors shows by itself. Which rules it judges, and their names and fixes,
// are the rules' (package rules); its CEL is written from the proxy table,
// proxy-await's flags and defaults, and what package invocation reads of a
// command line (cel.go, rules.go), never from a copy of them. It refuses
// only what it judges exactly: what it cannot, it admits, and check, which
// reads the whole input, finds.
package policy

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/internal/exitcode"
)

// Name is the policy's and its binding's name.
const Name = "proxy-await"

// Policy is the policy's CEL: the conditions of the requests it judges,
// its variables and validations; and what its binding has the API server
// do with an object it refuses.
type Policy struct {
	MatchConditions []MatchCondition
	Variables       []Variable
	Validations     []Validation
	Actions         []string // the binding's validationActions
}

// MatchCondition is a condition that a request must meet to be judged.
type MatchCondition struct{ Name, Expression string }

// New is the policy that c, proxy-awaitctl policy's command line, asks
// for: for the cluster's releases, and the settings of whole meshes that
// turn native sidecars on or off, as --versions states them; judging
// what --namespaces-excluded does not exclude; warning, or with --action
// deny refusing.
func New(c *config.Policy) *Policy {
	x := &writer{s: syntax(), versions: c.Versions, native: c.Native, defaults: defaults()}
	actions := []string{"Warn", "Audit"}
	if c.Deny {
		actions = []string{"Deny"}
	}
	return &Policy{MatchConditions: matchConditions(c.NamespacesExcluded), Variables: x.variables(), Validations: x.validations(), Actions: actions}
}

// SystemNamespaces are Kubernetes' own namespaces, whose objects the
// policy never judges: the cluster's own controllers run there.
var SystemNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// matchConditions are what the policy judges, so that it is safe to turn
// on in a running cluster: no object in Kubernetes' namespaces or those
// excluded; no object that opts out, on its own metadata or its pod
// template's, with manifest.OptOut; and an UPDATE only when it changes
// the pod template's spec besides its Scheduling, so that what a
// controller or a client changes besides (a ReplicaSet scaled to 0, a
// finalizer removed, kubectl rollout restart's annotation, a CronJob
// suspended, a queue placing a suspended Job) is never refused, and a
// Deployment that broke a rule before the policy existed can roll out its
// fix.
func matchConditions(excluded []string) []MatchCondition {
	template := func(o string) string {
		return fmt.Sprintf("(%[1]s.kind == 'Pod' ? %[1]s : %[1]s.kind == 'CronJob' ? %[1]s.spec.jobTemplate.spec.template : %[1]s.spec.template)", o)
	}
	optedOut := func(o string) string {
		return fmt.Sprintf("(has(%[1]s.metadata) && has(%[1]s.metadata.annotations) && %[2]s in %[1]s.metadata.annotations && %[1]s.metadata.annotations[%[2]s] == %[3]s)",
			o, q(manifest.OptOut), q(manifest.OptOutValue))
	}
	return []MatchCondition{
		{"namespace-not-excluded", fmt.Sprintf("!(request.namespace in %s)", list(append(slices.Clone(SystemNamespaces), excluded...)))},
		{"not-opted-out", fmt.Sprintf("!%s && !%s", optedOut("object"), optedOut(template("object")))},
		{"pod-template-spec-changed", fmt.Sprintf("request.operation != 'UPDATE' || %[1]s.spec.exists(k, !(k in %[3]s) && (!(k in %[2]s.spec) || %[1]s.spec[k] != %[2]s.spec[k])) || %[2]s.spec.exists(k, !(k in %[3]s) && !(k in %[1]s.spec))",
			template("object"), template("oldObject"), list(Scheduling))},
	}
}

// Scheduling are the fields of a pod's spec that say where it runs, which
// no rule reads: a queue sets them on a suspended Job (Kueue, through the
// Job's mutable scheduling directives) and a scheduler removes a Pod's
// gates, and an UPDATE that changes only them is not judged.
var Scheduling = []string{"nodeSelector", "affinity", "tolerations", "schedulingGates"}

// defaults are proxy-await's settings where its command line and
// environment give none, as its own parser makes them.
func defaults() *config.Config {
	cfg, err := config.ParseEnviron("proxy-await", []string{"--", "true"}, nil)
	if err != nil {
		panic("policy: proxy-await's defaults do not parse: " + err.Error())
	}
	return cfg
}

// Description says what the policy covers, as its annotation
// kubernetes.io/description does.
func Description() string {
	var covered, not []string
	for _, r := range Covered() {
		covered = append(covered, r.Name)
	}
	for _, r := range Omitted() {
		not = append(not, r.Name)
	}
	return "Warns of, or with its binding's Deny refuses, a pod template that one of proxy-awaitctl check's errors shows by itself: " + strings.Join(covered, ", ") +
		", where the object alone decides (proxy-await plainly first in a container's command, its flags written out, the sidecars the pod shows by itself). " +
		"Judged: every CREATE, and an UPDATE that changes the pod template's spec (besides " + strings.Join(Scheduling, ", ") + "), outside " + strings.Join(SystemNamespaces, ", ") + " and the namespaces excluded, " +
		"of an object without " + manifest.OptOut + ": " + manifest.OptOutValue + ". " +
		"Not covered: " + strings.Join(not, ", ") + ", nor what a Namespace or the rest of the input decides: run proxy-awaitctl check on the manifests for those."
}

// YAML is the policy and its binding as two YAML documents.
func (p *Policy) YAML() []byte {
	var vars, vals []any
	for _, v := range p.Variables {
		vars = append(vars, kv("name", v.Name, "expression", v.Expression))
	}
	for _, v := range p.Validations {
		vals = append(vals, kv("expression", v.Expression, "messageExpression", v.MessageExpression, "reason", "Invalid"))
	}
	var conds, actions []any
	for _, c := range p.MatchConditions {
		conds = append(conds, kv("name", c.Name, "expression", c.Expression))
	}
	for _, a := range p.Actions {
		actions = append(actions, a)
	}
	ops := []any{"CREATE", "UPDATE"}
	policy := kv(
		"apiVersion", "admissionregistration.k8s.io/v1",
		"kind", "ValidatingAdmissionPolicy",
		"metadata", kv("name", Name, "annotations", kv("kubernetes.io/description", Description())),
		"spec", kv(
			// An expression that fails (past the cost budget) admits: the
			// policy never refuses what it did not judge.
			"failurePolicy", "Ignore",
			"matchConstraints", kv("resourceRules", []any{
				kv("apiGroups", []any{""}, "apiVersions", []any{"v1"}, "operations", ops, "resources", []any{"pods"}),
				kv("apiGroups", []any{"apps"}, "apiVersions", []any{"v1"}, "operations", ops, "resources", []any{"deployments", "statefulsets", "daemonsets", "replicasets"}),
				kv("apiGroups", []any{"batch"}, "apiVersions", []any{"v1"}, "operations", ops, "resources", []any{"jobs", "cronjobs"}),
			}),
			"matchConditions", conds,
			"variables", vars,
			"validations", vals,
		),
	)
	binding := kv(
		"apiVersion", "admissionregistration.k8s.io/v1",
		"kind", "ValidatingAdmissionPolicyBinding",
		"metadata", kv("name", Name),
		"spec", kv("policyName", Name, "validationActions", actions),
	)
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(node(policy))
	_ = enc.Encode(node(binding))
	_ = enc.Close()
	return []byte(b.String())
}

// pairs is a mapping in order.
type pairs []any

func kv(items ...any) pairs { return pairs(items) }

// node is v as YAML, long strings as literal blocks.
func node(v any) *yaml.Node {
	switch v := v.(type) {
	case pairs:
		m := &yaml.Node{Kind: yaml.MappingNode}
		for i := 0; i+1 < len(v); i += 2 {
			m.Content = append(m.Content, node(v[i]), node(v[i+1]))
		}
		return m
	case []any:
		s := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range v {
			s.Content = append(s.Content, node(e))
		}
		return s
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
		if len(v) > 80 {
			n.Style = yaml.FoldedStyle
		}
		return n
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(v)}
}

// Main is proxy-awaitctl policy: it writes the policy and its binding to
// stdout.
func Main(c *config.Policy, stdout io.Writer, log *slog.Logger) int {
	if _, err := stdout.Write(New(c).YAML()); err != nil {
		log.Error(fmt.Sprintf("cannot write the policy: %v", err), "event", "policy_failed")
		return exitcode.Findings
	}
	return 0
}

package policy

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/config"
)

// The API server's bounds on a policy's CEL (k8s.io/apiserver
// pkg/apis/cel/config.go): what one expression may cost, and what all of
// one admission may.
const (
	perCallLimit         = 1_000_000
	runtimeCELCostBudget = 10_000_000
)

// newEnv is CEL as Kubernetes 1.30 gives it to a ValidatingAdmissionPolicy
// (k8s.io/apiserver pkg/cel/environment/base.go up to 1.30): the
// extended strings (version 2) and sets, optional types, homogeneous
// literals, the literal validators; object as dyn, and the variables.
// The Kubernetes libraries it adds (lists, regex, URLs, quantity, IP) the
// policy does not use, and their absence here keeps it so. Each variable
// is declared by its qualified name, variables.NAME, which CEL resolves as
// the API server's variables map: so the test can evaluate a variable
// when an expression first reads it, as the API server does, and not
// every one for every object.
func newEnv(t testing.TB, names []string) *cel.Env {
	t.Helper()
	opts := []cel.EnvOption{
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType),
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		cel.ASTValidators(cel.ValidateDurationLiterals(), cel.ValidateTimestampLiterals(),
			cel.ValidateRegexLiterals(), cel.ValidateHomogeneousAggregateLiterals()),
		cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
	}
	for _, n := range names {
		opts = append(opts, cel.Variable("variables."+n, cel.DynType))
	}
	env, err := cel.NewEnv(opts...)
	require.NoError(t, err)
	return env
}

// compiled is the policy's CEL, compiled.
type compiled struct {
	conditions  []cel.Program // its matchConditions
	vars        []cel.Program
	names       []string
	validations []cel.Program
	messages    []cel.Program
	rules       []string
	tracked     bool // its programs count their cost
}

// compiledFor is the policy for the releases rel (as --versions gives
// them), compiled once for all the tests of the package: compiling it
// takes most of a second, several under -race. With tracked, its programs
// count what they cost, which takes about as long again as evaluating.
func compiledFor(t testing.TB, rel string, tracked bool) *compiled {
	t.Helper()
	cache.Lock()
	defer cache.Unlock()
	key := fmt.Sprint(rel, tracked)
	if c, ok := cache.by[key]; ok {
		return c
	}
	v := versions(t, rel)
	c := compile(t, New(&config.Policy{Versions: v.versions, Native: v.native}), tracked)
	cache.by[key] = c
	return c
}

var cache = struct {
	sync.Mutex
	by map[string]*compiled
}{by: map[string]*compiled{}}

func compile(t testing.TB, p *Policy, tracked bool) *compiled {
	t.Helper()
	c := &compiled{tracked: tracked}
	for _, v := range p.Variables {
		c.names = append(c.names, v.Name)
	}
	env := newEnv(t, c.names)
	prog := func(expr string) cel.Program {
		ast, iss := env.Compile(expr)
		require.NoError(t, iss.Err(), "%.300s", expr)
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
		if tracked {
			opts = []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost), cel.CostLimit(perCallLimit),
				cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false))}
		}
		pr, err := env.Program(ast, opts...)
		require.NoError(t, err)
		return pr
	}
	for _, m := range p.MatchConditions {
		c.conditions = append(c.conditions, prog(m.Expression))
	}
	for _, v := range p.Variables {
		c.vars = append(c.vars, prog(v.Expression))
	}
	for _, v := range p.Validations {
		c.validations = append(c.validations, prog(v.Expression))
		c.messages = append(c.messages, prog(v.MessageExpression))
		c.rules = append(c.rules, v.Rule)
	}
	return c
}

// verdict is what the policy says of an object: the messages of the
// validations that refuse it, and, when its programs are tracked, what its
// CEL cost: in all, and at most for one expression.
type verdict struct {
	refused  []string
	rules    []string
	cost     uint64
	maxCost  uint64
	errorsOf []string // expressions that failed, which Ignore admits
}

func (c *compiled) eval(t testing.TB, obj map[string]any) verdict {
	t.Helper()
	var v verdict
	track := func(d *cel.EvalDetails) {
		if d != nil && d.ActualCost() != nil {
			v.cost += *d.ActualCost()
			v.maxCost = max(v.maxCost, *d.ActualCost())
		}
	}
	act := map[string]any{"object": obj, "oldObject": nil, "request": nil}
	// Each variable is evaluated when an expression first reads it, once.
	for i, p := range c.vars {
		var done bool
		var val ref.Val
		act["variables."+c.names[i]] = func() ref.Val {
			if !done {
				out, d, err := p.Eval(act)
				track(d)
				if err != nil {
					v.errorsOf = append(v.errorsOf, fmt.Sprintf("variable %s: %v", c.names[i], err))
				}
				val, done = out, true
			}
			return val
		}
	}
	for i, p := range c.validations {
		out, d, err := p.Eval(act)
		track(d)
		if err != nil {
			v.errorsOf = append(v.errorsOf, fmt.Sprintf("%s: %v", c.rules[i], err))
			continue
		}
		if out.Value() == true {
			continue
		}
		msg, d, err := c.messages[i].Eval(act)
		track(d)
		require.NoError(t, err, "the message of %s", c.rules[i])
		v.refused = append(v.refused, msg.Value().(string))
		v.rules = append(v.rules, c.rules[i])
	}
	return v
}

func (v verdict) String() string { return strings.Join(v.refused, "\n") }

// judges says whether the policy judges a request: operation (CREATE or
// UPDATE) of obj in namespace, which was old before an UPDATE, as its
// matchConditions say. An error is the API server's failurePolicy's,
// Ignore: not judged.
func (c *compiled) judges(t testing.TB, operation, namespace string, obj, old map[string]any) bool {
	t.Helper()
	act := map[string]any{"object": obj, "oldObject": old, "request": map[string]any{"operation": operation, "namespace": namespace}}
	for _, p := range c.conditions {
		out, _, err := p.Eval(act)
		require.NoError(t, err)
		if out.Value() != true {
			return false
		}
	}
	return true
}

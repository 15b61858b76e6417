package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
	"github.com/stretchr/testify/require"
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
// policy does not use, and their absence here keeps it so.
func newEnv(t testing.TB) *cel.Env {
	t.Helper()
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)),
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
	)
	require.NoError(t, err)
	return env
}

// compiled is the policy's CEL, compiled.
type compiled struct {
	vars        []cel.Program
	names       []string
	validations []cel.Program
	messages    []cel.Program
	rules       []string
}

func compile(t testing.TB, p *Policy) *compiled {
	t.Helper()
	env := newEnv(t)
	prog := func(expr string) cel.Program {
		ast, iss := env.Compile(expr)
		require.NoError(t, iss.Err(), "%.300s", expr)
		pr, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost), cel.CostLimit(perCallLimit),
			cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)))
		require.NoError(t, err)
		return pr
	}
	c := &compiled{}
	for _, v := range p.Variables {
		c.vars = append(c.vars, prog(v.Expression))
		c.names = append(c.names, v.Name)
	}
	for _, v := range p.Validations {
		c.validations = append(c.validations, prog(v.Expression))
		c.messages = append(c.messages, prog(v.MessageExpression))
		c.rules = append(c.rules, v.Rule)
	}
	return c
}

// verdict is what the policy says of an object: the messages of the
// validations that refuse it, and what its CEL cost: in all, and at most
// for one expression.
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
	vars := map[string]any{}
	act := map[string]any{"object": obj, "variables": vars}
	track := func(d *cel.EvalDetails) {
		if d != nil && d.ActualCost() != nil {
			v.cost += *d.ActualCost()
			v.maxCost = max(v.maxCost, *d.ActualCost())
		}
	}
	for i, p := range c.vars {
		out, d, err := p.Eval(act)
		track(d)
		if err != nil {
			v.errorsOf = append(v.errorsOf, fmt.Sprintf("variable %s: %v", c.names[i], err))
			return v
		}
		vars[c.names[i]] = out
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

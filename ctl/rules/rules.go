// Package rules is proxy-awaitctl check's rules, one file each, named after
// the rule: its row (its name, stable since CI scripts and docs/check.md
// name it; its level; when it is reported; the fix), whether the admission
// policy judges it, and its judgement. Each registers itself, and the rules
// are judged from the registry, in the order of their names: a new rule is
// its file and its golden cases, testdata/NAME.txtar. docs/check.md's table
// of rules is the registry (a test in package check holds it so).
//
// A rule judges a container that runs proxy-await against the sidecars its
// pod shows, or the pod as a whole. Each message says what is wrong, with
// the numbers, and one fix that works; each finding is at the line of the
// value that is wrong. A rule that needs a value the input does not hold is
// not judged, and says so once (unknown-value).
package rules

import (
	"fmt"
	"slices"
	"strings"
)

// Levels of findings.
const (
	Error   = "error"
	Warning = "warning"
)

// Rule is one of check's rules.
type Rule struct {
	Name    string
	Level   string // Error or Warning
	Summary string // when it is reported
	Fix     string
	// Policy says that proxy-awaitctl policy refuses what the rule finds,
	// where one object alone decides; an error rule that it leaves out
	// says why in PolicyOmits.
	Policy      bool
	PolicyOmits string

	container func(*judge)    // judges a container that runs proxy-await
	pod       func(*podJudge) // judges the pod as a whole
}

// registry is every rule, in the order of their names.
var registry []*Rule

// register adds a rule to the registry, in its place.
func register(r Rule) {
	i, found := slices.BinarySearchFunc(registry, r.Name, func(r *Rule, name string) int { return strings.Compare(r.Name, name) })
	if found {
		panic("rules: two rules called " + r.Name)
	}
	registry = slices.Insert(registry, i, &r)
}

// All are the rules, in the order of their names.
func All() []Rule {
	out := make([]Rule, len(registry))
	for i, r := range registry {
		out[i] = *r
	}
	return out
}

// lookup is the rule called name, which must be registered.
func lookup(name string) *Rule {
	i, found := slices.BinarySearchFunc(registry, name, func(r *Rule, name string) int { return strings.Compare(r.Name, name) })
	if !found {
		panic("rules: no rule " + name)
	}
	return registry[i]
}

// Finding is one mistake found, at a container of a pod template (or at a
// file, for the rules input and skipped).
type Finding struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Level     string `json:"level"`
	Rule      string `json:"rule"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Container string `json:"container"`
	Message   string `json:"message"`
}

// String is the finding as the text output prints it:
// FILE:LINE: LEVEL: RULE: KIND/NAME container NAME: message. A finding about
// a whole file (rule input) has no object, and no line when none is known.
func (f Finding) String() string {
	at := f.File
	if f.Line > 0 {
		at = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	if f.Kind == "" {
		return fmt.Sprintf("%s: %s: %s: %s", at, f.Level, f.Rule, f.Message)
	}
	return fmt.Sprintf("%s: %s: %s: %s/%s container %s: %s", at, f.Level, f.Rule, f.Kind, f.Name, f.Container, f.Message)
}

// values.go: what a container's variables and words hold, as far as the
// input says. A value from a ConfigMap or Secret of the input is read from
// it; one from elsewhere (a ConfigMap the input does not hold, the
// downward API, an envFrom that may set anything) is unknown, with where
// it comes from, and what needs it is not judged.

package manifest

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/proxy-await/proxy-await/internal/redact"
)

// Value is what a variable or a word holds: its text, or, when the input
// does not hold it, where it comes from ("ConfigMap timings (key delay),
// which the input does not hold").
type Value struct {
	Text   string
	Known  bool
	From   string
	May    bool // an unknown value that may come from there (an envFrom), or not at all
	Secret bool // a credential: from a Secret, or a variable whose name says so
}

// Word is an argument of a command line, with where it is.
type Word struct {
	Text   string // as the program gets it; as written when unknown
	Known  bool
	From   string // where an unknown word's value comes from
	Line   int
	Breaks []int // a multi-line scalar's: where its later lines start (a script's)
	Folded bool  // of a folded block scalar, whose lines are joined
	// Secret: its text is a credential, which messages never show; they
	// show Written instead, the word as the script writes it ($TOKEN),
	// or, when that is empty, redact.Mask.
	Secret  bool
	Written string
}

// Known is a word whose text the manifest holds, at line.
func Known(text string, line int) Word { return Word{Text: text, Known: true, Line: line} }

// Unknown is a value that the input does not hold: what it is (a flag, a
// variable, a sidecar's setting), where it comes from, and the line that
// names it. What needs it is not judged.
type Unknown struct {
	What, From string
	Line       int
	May        bool // it may come from there (an envFrom), or not at all
}

// Variable is a container's variable: its value and the line that sets it.
type Variable struct {
	Value
	Line int
}

// Variables are a container's variables as the kubelet sets them: from
// envFrom, then env, each $(VAR) in env expanded from those before it.
type Variables struct {
	Set map[string]Variable
	// Open is set when an envFrom source is not in the input: then any
	// variable that env does not set may come from it, at OpenLine.
	Open     string
	OpenLine int
}

// Get is a variable: its value, and whether it is set. A variable that env
// does not set is unknown when an envFrom source is not in the input.
func (e *Variables) Get(name string) (Value, bool) {
	if v, ok := e.Set[name]; ok {
		return v.Value, true
	}
	if e.Open != "" {
		return Value{From: e.Open, May: true}, true
	}
	return Value{Known: true}, false
}

// Line is the line of the env entry that sets a variable, else of the
// envFrom that may, else def.
func (e *Variables) Line(name string, def int) int {
	if v, ok := e.Set[name]; ok {
		return v.Line
	}
	if e.OpenLine > 0 {
		return e.OpenLine
	}
	return def
}

// describe is a reference as messages name it.
func (r *Reference) describe() string {
	switch {
	case r.Kind == "":
		return "valueFrom " + r.Key
	case r.Key == "":
		return fmt.Sprintf("envFrom %s %s", r.Kind, r.Name)
	}
	return fmt.Sprintf("valueFrom %s %s (key %s)", r.Kind, r.Name, r.Key)
}

// resolve sets c.Vars from its env and envFrom, reading the ConfigMaps and
// Secrets of the pod's namespace that the input holds.
func resolve(c *Container, namespace string, stores map[storeKey]*store) {
	e := &Variables{Set: map[string]Variable{}}
	for _, r := range c.EnvFrom {
		st := stores[storeKey{r.Kind, namespace, r.Name}]
		if st == nil {
			if e.Open == "" {
				e.Open, e.OpenLine = r.describe()+", which the input does not hold", r.Line
			}
			continue
		}
		for k, v := range st.data {
			if validName(r.Prefix + k) {
				e.Set[r.Prefix+k] = Variable{Value{Text: v, Known: true, Secret: r.Kind == "Secret" || SecretName(r.Prefix+k)}, r.Line}
			}
		}
	}
	for _, ev := range c.Env {
		v := Variable{Line: ev.Line}
		switch r := ev.From; {
		case r == nil:
			v.Value = e.Expand(ev.Value)
			v.Secret = v.Secret || SecretName(ev.Name)
		case r.Kind == "":
			v.From = r.describe() + ", which only the running pod knows"
		default:
			st := stores[storeKey{r.Kind, namespace, r.Name}]
			text, ok := "", false
			if st != nil {
				text, ok = st.data[r.Key]
			}
			switch {
			case ok:
				v.Text, v.Known, v.Secret = text, true, r.Kind == "Secret" || SecretName(ev.Name)
			case st != nil && r.Optional:
				continue // an optional key that is not there: not set
			case st != nil:
				v.From = r.describe() + ", a key that the input's " + r.Kind + " " + r.Name + " does not have"
			default:
				v.From = r.describe() + ", which the input does not hold"
			}
		}
		e.Set[ev.Name] = v
	}
	c.Vars = e
}

// Expand replaces $(VAR) with the variable's value, as the kubelet does in
// command, args and env values: $$ is a literal $. A reference to a
// variable that the manifest does not define stays as written at run time,
// unless the pod's environment has it after all (a Service's variables,
// an envFrom): the manifest does not say, so the value is unknown.
func (e *Variables) Expand(s string) Value {
	if !strings.Contains(s, "$") {
		return Value{Text: s, Known: true}
	}
	var b strings.Builder
	out := Value{Known: true}
	unknown := func(from string) {
		if out.Known {
			out.Known, out.From = false, from
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				break
			}
			ref, name := s[i:i+3+end], s[i+2:i+2+end]
			v, ok := e.Set[name]
			switch {
			case !ok && !validName(name):
				// No variable has such a name ("$(cat f)" in a script): the
				// kubelet leaves it as written.
				b.WriteString(ref)
			case ok && v.Known:
				b.WriteString(v.Text)
				out.Secret = out.Secret || v.Secret
			case ok:
				unknown(ref + ", which comes from " + v.From)
				b.WriteString(ref)
			case e.Open != "":
				unknown(ref + ", which may come from " + e.Open)
				b.WriteString(ref)
			default:
				unknown(ref + ", which the container's env does not define")
				b.WriteString(ref)
			}
			i += 2 + end
			continue
		}
		b.WriteByte('$')
	}
	out.Text = b.String()
	return out
}

// Words are a container's command or args as the kubelet passes them.
func (c *Container) Words(list []Scalar) []Word {
	var out []Word
	for _, s := range list {
		v := c.Vars.Expand(s.Text)
		out = append(out, Word{Text: v.Text, Known: v.Known, From: v.From, Line: s.Line, Breaks: s.Breaks, Folded: s.Folded, Secret: v.Secret})
	}
	return out
}

// SecretName says whether a variable's name says that its value is a
// credential: TOKEN, PASSWORD, SECRET, AUTH, KEY and the like, in any case.
func SecretName(name string) bool {
	name = strings.ToUpper(name)
	for _, s := range []string{"PASS", "SECRET", "TOKEN", "AUTH", "CRED", "KEY", "COOKIE", "SESSION", "BEARER", "PRIVATE"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// Shown is a word of a command as a message quotes it: a credential
// as written or masked, a URL as package redact shows it (its password
// masked; a value that is no URL not past its host), the rest as it is;
// in Go's quotes when it is empty or holds white space or a control
// character (a folded scalar's word ends in a newline), so that the
// finding stays one line.
func Shown(w Word) string {
	s := redact.Word(w.Text)
	if w.Secret {
		s = cmp.Or(w.Written, redact.Mask)
	}
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return s
}

// validName says whether name is a variable's name, as the kubelet and
// shells take it.
func validName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, r := range name {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

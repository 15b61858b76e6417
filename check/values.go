// values.go: what a container's variables and words hold, as far as the
// input says. A value from a ConfigMap or Secret of the input is read from
// it; one from elsewhere (a ConfigMap the input does not hold, the
// downward API, an envFrom that may set anything) is unknown, with where
// it comes from, and the rules that need it are not judged.

package check

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/proxy-await/proxy-await/internal/redact"
)

// value is what a variable or a word holds: its text, or, when the input
// does not hold it, where it comes from ("ConfigMap timings (key delay),
// which the input does not hold").
type value struct {
	text   string
	known  bool
	from   string
	may    bool // an unknown value that may come from there (an envFrom), or not at all
	secret bool // a credential: from a Secret, or a variable whose name says so
}

// word is an argument of a command line, with where it is.
type word struct {
	text   string // as the program gets it; as written when unknown
	known  bool
	from   string // where an unknown word's value comes from
	line   int
	breaks []int // a multi-line scalar's: where its later lines start (a script's)
	folded bool  // of a folded block scalar, whose lines are joined
	// secret: its text is a credential, which findings never show; they
	// show written instead, the word as the script writes it ($TOKEN),
	// or, when that is empty, redact.Mask.
	secret  bool
	written string
}

// variable is a container's variable: its value and the line that sets it.
type variable struct {
	value
	line int
}

// environment is a container's variables as the kubelet sets them: from
// envFrom, then env, each $(VAR) in env expanded from those before it.
type environment struct {
	vars map[string]variable
	// open is set when an envFrom source is not in the input: then any
	// variable that env does not set may come from it.
	open     string
	openLine int
}

// get is a variable: its value, and whether it is set. A variable that env
// does not set is unknown when an envFrom source is not in the input.
func (e *environment) get(name string) (value, bool) {
	if v, ok := e.vars[name]; ok {
		return v.value, true
	}
	if e.open != "" {
		return value{from: e.open, may: true}, true
	}
	return value{known: true}, false
}

// storeKey names a ConfigMap or Secret of the input.
type storeKey struct{ kind, namespace, name string }

// describe is a reference as messages name it.
func (r *reference) describe() string {
	switch {
	case r.kind == "":
		return "valueFrom " + r.key
	case r.key == "":
		return fmt.Sprintf("envFrom %s %s", r.kind, r.name)
	}
	return fmt.Sprintf("valueFrom %s %s (key %s)", r.kind, r.name, r.key)
}

// resolve sets c.vars from its env and envFrom, reading the ConfigMaps and
// Secrets of the pod's namespace that the input holds.
func resolve(c *container, namespace string, stores map[storeKey]*store) {
	e := &environment{vars: map[string]variable{}}
	for _, r := range c.envFrom {
		st := stores[storeKey{r.kind, namespace, r.name}]
		if st == nil {
			if e.open == "" {
				e.open, e.openLine = r.describe()+", which the input does not hold", r.line
			}
			continue
		}
		for k, v := range st.data {
			if validName(r.prefix + k) {
				e.vars[r.prefix+k] = variable{value{text: v, known: true, secret: r.kind == "Secret" || secretName(r.prefix+k)}, r.line}
			}
		}
	}
	for _, ev := range c.env {
		v := variable{line: ev.line}
		switch r := ev.from; {
		case r == nil:
			v.value = e.expand(ev.value)
			v.secret = v.secret || secretName(ev.name)
		case r.kind == "":
			v.from = r.describe() + ", which only the running pod knows"
		default:
			st := stores[storeKey{r.kind, namespace, r.name}]
			text, ok := "", false
			if st != nil {
				text, ok = st.data[r.key]
			}
			switch {
			case ok:
				v.text, v.known, v.secret = text, true, r.kind == "Secret" || secretName(ev.name)
			case st != nil && r.optional:
				continue // an optional key that is not there: not set
			case st != nil:
				v.from = r.describe() + ", a key that the input's " + r.kind + " " + r.name + " does not have"
			default:
				v.from = r.describe() + ", which the input does not hold"
			}
		}
		e.vars[ev.name] = v
	}
	c.vars = e
}

// expand replaces $(VAR) with the variable's value, as the kubelet does in
// command, args and env values: $$ is a literal $. A reference to a
// variable that the manifest does not define stays as written at run time,
// unless the pod's environment has it after all (a Service's variables,
// an envFrom): the manifest does not say, so the value is unknown.
func (e *environment) expand(s string) value {
	if !strings.Contains(s, "$") {
		return value{text: s, known: true}
	}
	var b strings.Builder
	out := value{known: true}
	unknown := func(from string) {
		if out.known {
			out.known, out.from = false, from
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
			v, ok := e.vars[name]
			switch {
			case !ok && !validName(name):
				// No variable has such a name ("$(cat f)" in a script): the
				// kubelet leaves it as written.
				b.WriteString(ref)
			case ok && v.known:
				b.WriteString(v.text)
				out.secret = out.secret || v.secret
			case ok:
				unknown(ref + ", which comes from " + v.from)
				b.WriteString(ref)
			case e.open != "":
				unknown(ref + ", which may come from " + e.open)
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
	out.text = b.String()
	return out
}

// words are a container's command or args as the kubelet passes them.
func (c *container) words(list []scalar) []word {
	var out []word
	for _, s := range list {
		v := c.vars.expand(s.s)
		out = append(out, word{text: v.text, known: v.known, from: v.from, line: s.line, breaks: s.breaks, folded: s.folded, secret: v.secret})
	}
	return out
}

// secretName says whether a variable's name says that its value is a
// credential: TOKEN, PASSWORD, SECRET, AUTH, KEY and the like, in any case.
func secretName(name string) bool {
	name = strings.ToUpper(name)
	for _, s := range []string{"PASS", "SECRET", "TOKEN", "AUTH", "CRED", "KEY", "COOKIE", "SESSION", "BEARER", "PRIVATE"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// credentialFlags are the options of HTTP clients (curl, wget, HTTPie)
// whose value is a credential, in the next word or after "=".
var credentialFlags = []string{"-u", "--user", "-U", "--proxy-user", "--oauth2-bearer", "--password", "--http-password",
	"--proxy-password", "--ftp-password", "-a", "--auth", "-b", "--cookie"}

// markCredentials marks the words of a command that are credentials: the
// value of a credential option (curl -u USER:PASS, -uUSER:PASS,
// --user=USER:PASS) and a header that carries one (-H "Authorization:
// Bearer ...").
func markCredentials(words []word) {
	for i := range words {
		t := words[i].text
		name, _, hasValue := strings.Cut(t, "=")
		switch {
		case slices.Contains(credentialFlags, name) && hasValue,
			len(t) > 2 && t[0] == '-' && t[1] == 'u',
			credentialHeader(t):
			words[i].secret = true
		case slices.Contains(credentialFlags, t) && i+1 < len(words):
			words[i+1].secret = true
		}
	}
}

// credentialHeader says whether an HTTP header, "Name: value" (or an
// option --header=Name:value), carries a credential: by its name.
func credentialHeader(h string) bool {
	if rest, ok := strings.CutPrefix(h, "--header="); ok {
		h = rest
	}
	name, _, ok := strings.Cut(h, ":")
	return ok && name != "" && !strings.ContainsAny(name, " /") && (secretName(name) || strings.EqualFold(name, "Authorization"))
}

// shownWord is a word of a command as a finding quotes it: a credential
// as written or masked, a URL as package redact shows it (its password
// masked; a value that is no URL not past its host), the rest as it is;
// in Go's quotes when it is empty or holds white space or a control
// character (a folded scalar's word ends in a newline), so that the
// finding stays one line.
func shownWord(w word) string {
	s := redact.Word(w.text)
	if w.secret {
		s = cmp.Or(w.written, redact.Mask)
	}
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return s
}

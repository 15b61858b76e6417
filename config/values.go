// values.go: the flag value types (durations, ports, URL lists, signal
// rewrites) and their parsers.

package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/internal/signals"
	"github.com/proxy-await/proxy-await/proxies"
)

// boolean is a boolean flag value. pflag's own shows in --help as
// "--shutdown[=true|false]", which reads as if the value could follow a
// space; this one shows as "--shutdown", as it is used.
type boolean bool

func (b *boolean) String() string { return strconv.FormatBool(bool(*b)) }
func (b *boolean) Type() string   { return "bool" }
func (b *boolean) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("must be true or false")
	}
	*b = boolean(v)
	return nil
}

// duration is a flag value in Go syntax ("250ms", "1m30s") that also takes
// "d" for days and a bare integer for seconds. Spaces around it are dropped,
// as linkerd-await drops them (its only bare integer is 0).
type duration time.Duration

func (d *duration) String() string  { return time.Duration(*d).String() }
func (d *duration) Type() string    { return "duration" }
func (d *duration) example() string { return "30s" }
func (d *duration) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

const day = 24 * time.Hour

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty duration")
	}
	if strings.HasPrefix(s, "-") {
		return 0, errors.New("must not be negative")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, errors.New("must not be negative")
		}
		if n > int64(1<<63-1)/int64(time.Second) {
			return 0, errors.New("duration out of range")
		}
		return time.Duration(n) * time.Second, nil
	}
	var days time.Duration
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || n < 0 || strings.ContainsAny(s[:i], "eEnN+-xXpP_") {
			return 0, fmt.Errorf("not a duration (use 250ms, 1m30s, 2d or seconds)")
		}
		if n*float64(day) >= 1<<63 { // float64(1<<63-1) rounds up to 1<<63
			return 0, errors.New("duration out of range")
		}
		days, rest = time.Duration(n*float64(day)), s[i+1:]
		if rest == "" {
			return days, nil
		}
	}
	if strings.HasPrefix(rest, "-") {
		return 0, errors.New("must not be negative")
	}
	v, err := time.ParseDuration(rest)
	if err != nil {
		return 0, fmt.Errorf("not a duration (use 250ms, 1m30s, 2d or seconds)")
	}
	if v > 1<<63-1-days {
		return 0, errors.New("duration out of range")
	}
	return days + v, nil
}

// listValue is the value of a repeatable flag: every use adds to it. From
// its environment variable it always takes a comma-separated list; on the
// command line, one use is a list only when splitsOnCommandLine says so (a
// comma is legal inside a URL, so a URL flag takes one URL per use).
type listValue interface {
	pflag.Value
	add(item string) error
	splitsOnCommandLine() bool
}

// addItems adds s to v: as one item, or as a comma-separated list when
// split. Spaces around a list's items are dropped; an empty item is an error.
func addItems(v listValue, s string, split bool) error {
	if !split {
		return v.add(s)
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return errEmptyItem
		}
		if err := v.add(item); err != nil {
			return atInList(s, err)
		}
	}
	return nil
}

// atInList is err, the error of an item of the list s, as a message may
// show it. No item of a list that splits at commas has an "@"; when s has
// one, it may be a URL with a password, cut at its commas, so that no part
// of an item can be shown: only the hint is kept.
func atInList(s string, err error) error {
	if !strings.Contains(s, "@") {
		return err
	}
	return hint.New(errors.New("no item of this flag has an @: is it a URL meant for another flag?"), hint.Of(err))
}

// urlList is a repeatable URL flag. The first URL given replaces the
// preset's list. It never shows a URL but as package redact does.
type urlList struct {
	urls     *[]string
	loopback bool // shutdown URLs must stay inside the pod
}

func (u *urlList) String() string { return redact.URLs(*u.urls) }
func (u *urlList) Type() string   { return "URL" }
func (u *urlList) example() string {
	ready, shutdown := proxies.Default.URLs(0)
	if u.loopback {
		return shutdown
	}
	return ready
}
func (u *urlList) Set(s string) error        { return addItems(u, s, u.splitsOnCommandLine()) }
func (u *urlList) splitsOnCommandLine() bool { return false }
func (u *urlList) add(raw string) error {
	if err := checkURL(raw, u.loopback); err != nil {
		return err
	}
	if l := strings.ToLower(raw); strings.Contains(l, ",http://") || strings.Contains(l, ",https://") {
		// Legal, but a list written where one URL goes: it would be
		// probed, or POSTed, as one URL with a strange path.
		return hint.New(errors.New("one URL per use of the flag: a list works only in its environment variable"),
			"repeat FLAG for each URL")
	}
	*u.urls = append(*u.urls, raw)
	return nil
}

// addList adds the URLs of a list from an environment variable (urlItems
// splits it). Its error quotes the list only up to the URL that is wrong:
// what follows may be the rest of that URL's password.
func (u *urlList) addList(s string) error {
	items := urlItems(s)
	for i, item := range items {
		err := errEmptyItem
		if !strayComma(item) {
			err = u.add(item)
		}
		if err != nil {
			shown := redact.URLs(items[:i+1])
			if i < len(items)-1 {
				shown += "," + redact.Cut
			}
			return &listError{shown: shown, err: err}
		}
	}
	return nil
}

// urlItems splits a URL list from an environment variable
// (PROXY_AWAIT_READY_URL=URL1,URL2) at each comma where the next URL starts,
// with its scheme and "//", or where the list ends: a comma is legal inside
// a URL, in a query or a password. Spaces around each URL are dropped. An
// empty item, or one that ends with a comma (",," in a list), is a stray
// comma.
func urlItems(s string) []string {
	var items []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && (s[i] != ',' || !startsList(s[i+1:])) {
			continue
		}
		items = append(items, strings.TrimSpace(s[start:i]))
		start = i + 1
	}
	return items
}

// strayComma says whether an item of urlItems is a stray comma's: empty, or
// ending with a comma.
func strayComma(item string) bool { return item == "" || strings.HasSuffix(item, ",") }

// startsList says whether s, what follows a comma in a URL list, is the
// next URL or the list's end.
func startsList(s string) bool {
	s = strings.TrimSpace(s)
	scheme, _, ok := strings.Cut(s, "://")
	if s == "" || !ok || scheme == "" {
		return s == ""
	}
	u, err := url.Parse(scheme + ":")
	return err == nil && strings.EqualFold(u.Scheme, scheme)
}

// listError is a wrong item of a list from an environment variable, with
// the list as its usage error quotes it.
type listError struct {
	shown string
	err   error
}

func (e *listError) Error() string { return e.err.Error() }
func (e *listError) Unwrap() error { return e.err }

var errEmptyItem = errors.New("empty item in a comma-separated list")

// checkURL accepts http and https URLs with a host; with loopback, only a
// host inside the pod (127.0.0.0/8, ::1, localhost): a proxy takes shutdown
// requests from its own pod only, and nothing else should be told to stop.
func checkURL(raw string, loopback bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not an http or https URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme must be http or https")
	}
	if _, whole := redact.Parse(raw); !whole && strings.Contains(raw, "@") {
		// url.Parse ended the userinfo early: a "/" in a password
		// makes the rest of it the path, and the host the password's
		// start. Checked before the host and port, which would show it.
		return hint.New(errors.New("an @ after the host: a user name or password with / ? or # in it"),
			"percent-encode them in the user name and password (%2F, %3F, %23), and an @ in the path as %40")
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("not a port number: %s", p)
		}
	}
	if loopback && !IsLoopback(u.Hostname()) {
		return fmt.Errorf("host %s is not loopback: a proxy accepts shutdown only from inside the pod", u.Hostname())
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// IsLoopback says whether host, a URL's host, is inside the pod: the
// loopback addresses 127.0.0.0/8 and ::1, and the name localhost.
func IsLoopback(host string) bool {
	if isASCII(host) && strings.EqualFold(host, "localhost") {
		return true // ASCII only: "localhoſt" folds to "localhost" too
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// rewriteTable is the --rewrite flag: FROM:TO rules, repeatable, and
// comma-separated on the command line too. A signal rewritten twice to
// different signals is a mistake, not "the last rule wins".
type rewriteTable struct {
	to    map[syscall.Signal]syscall.Signal
	rules map[syscall.Signal]string // each FROM's rule as written
}

func (r *rewriteTable) Type() string    { return "FROM:TO" }
func (r *rewriteTable) example() string { return "TERM:USR1" }
func (r *rewriteTable) String() string {
	var rules []string
	for from, to := range r.to {
		rules = append(rules, fmt.Sprintf("%d:%d", int(from), int(to)))
	}
	slices.Sort(rules)
	return strings.Join(rules, ",")
}
func (r *rewriteTable) Set(s string) error        { return addItems(r, s, r.splitsOnCommandLine()) }
func (r *rewriteTable) splitsOnCommandLine() bool { return true }
func (r *rewriteTable) add(rule string) error {
	from, to, err := signals.ParseRewrite(rule)
	if err != nil {
		return err
	}
	if prev, ok := r.to[from]; ok && prev != to {
		return hint.New(fmt.Errorf("signal %s is rewritten twice, by %s and by %s", signals.Name(from), r.rules[from], rule),
			"keep one rule for each signal")
	}
	r.to[from], r.rules[from] = to, rule
	return nil
}

// port is a TCP port number, 1-65535, in decimal: pflag's IntVar reads
// numbers as Go literals, so "010" would be port 8 and "0x1" port 1.
type port int

func (p *port) String() string  { return strconv.Itoa(int(*p)) }
func (p *port) Type() string    { return "port" }
func (p *port) example() string { return strconv.Itoa(proxies.Default.DefaultPort()) }
func (p *port) Set(s string) error {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return errors.New("not a decimal number")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n < 1 || n > 65535 {
		return errors.New("not a port number (1-65535)")
	}
	*p = port(n)
	return nil
}

// portList is the --drain-ports flag: TCP ports as port reads them,
// repeatable, and comma-separated on the command line too; a port given
// twice counts once.
type portList struct{ ports *[]uint16 }

func (l portList) Type() string    { return "PORT[,PORT]" }
func (l portList) example() string { return "8080" }
func (l portList) String() string {
	var out []string
	for _, p := range *l.ports {
		out = append(out, strconv.Itoa(int(p)))
	}
	return strings.Join(out, ",")
}
func (l portList) Set(s string) error        { return addItems(l, s, l.splitsOnCommandLine()) }
func (l portList) splitsOnCommandLine() bool { return true }
func (l portList) add(item string) error {
	var p port
	if err := p.Set(item); err != nil {
		return err
	}
	if !slices.Contains(*l.ports, uint16(p)) {
		*l.ports = append(*l.ports, uint16(p))
	}
	return nil
}

// exitCodeMap is the --exit-code-map flag: FROM:TO rules, repeatable, and
// comma-separated on the command line too; codes 0-255. A code mapped to
// two different codes is an error: which rule wins would be a guess.
type exitCodeMap struct {
	codes map[int]int
	rules map[int]string // each FROM's rule as written
}

func (m *exitCodeMap) Type() string    { return "FROM:TO" }
func (m *exitCodeMap) example() string { return "143:0" }
func (m *exitCodeMap) String() string {
	var rules []string
	for from, to := range m.codes {
		rules = append(rules, fmt.Sprintf("%d:%d", from, to))
	}
	slices.Sort(rules)
	return strings.Join(rules, ",")
}
func (m *exitCodeMap) Set(s string) error        { return addItems(m, s, m.splitsOnCommandLine()) }
func (m *exitCodeMap) splitsOnCommandLine() bool { return true }
func (m *exitCodeMap) add(rule string) error {
	f, t, ok := strings.Cut(rule, ":")
	if !ok {
		return errors.New("want FROM:TO, as in 143:0")
	}
	from, err := exitCodeValue(f)
	if err != nil {
		return err
	}
	to, err := exitCodeValue(t)
	if err != nil {
		return err
	}
	if prev, ok := m.codes[from]; ok && prev != to {
		return hint.New(fmt.Errorf("exit code %d is mapped twice, by %s and by %s", from, m.rules[from], rule),
			"keep one rule for each code")
	}
	m.codes[from], m.rules[from] = to, rule
	return nil
}

// exitCodeValue reads an exit code: a decimal number from 0 to 255.
func exitCodeValue(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 || !isDigits(s) {
		return 0, fmt.Errorf("exit code %q is not a number from 0 to 255", s)
	}
	return n, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// appProbe is the --app-probe flag: the app's own check behind the probes
// proxy-await serves, an http or https URL inside the pod or tcp:PORT. The
// check is made from inside the pod, so a host outside it would probe
// another pod's health.
type appProbe string

func (a *appProbe) Type() string    { return "URL|tcp:PORT" }
func (a *appProbe) example() string { return "http://127.0.0.1:8080/healthz" }
func (a *appProbe) String() string {
	if strings.HasPrefix(string(*a), "tcp:") {
		return string(*a)
	}
	return redact.URL(string(*a))
}
func (a *appProbe) Set(s string) error {
	if p, ok := strings.CutPrefix(s, "tcp:"); ok {
		var n port
		if err := n.Set(p); err != nil {
			return err
		}
		*a = appProbe(s)
		return nil
	}
	if err := checkURL(s, false); err != nil {
		return hint.New(err, "write http://127.0.0.1:PORT/PATH or tcp:PORT")
	}
	if u, _ := url.Parse(s); !IsLoopback(u.Hostname()) {
		return hint.New(fmt.Errorf("host %s is not loopback: the check is of the app in this pod", u.Hostname()),
			"write http://127.0.0.1:PORT/PATH")
	}
	*a = appProbe(s)
	return nil
}

// probePort is the --probe-port flag: a port as port reads it, with an
// example that is no proxy's.
type probePort int

func (p *probePort) String() string     { return (*port)(p).String() }
func (p *probePort) Type() string       { return "port" }
func (p *probePort) Set(s string) error { return (*port)(p).Set(s) }
func (p *probePort) example() string    { return "8081" }

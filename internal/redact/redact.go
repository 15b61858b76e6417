// Package redact turns a URL into the text that proxy-await shows to people
// and log pipelines: the one place that decides what of a URL may be printed.
//
// A readiness or shutdown URL may carry credentials
// (http://user:secret@127.0.0.1:9901/ready), and stderr goes to a cluster's
// log pipeline, which more people can read than the pod's secrets. The
// password of a URL's userinfo is replaced by "xxxxx", as url.URL.Redacted
// does; the user name stays, so that a reader can tell which credentials were
// used. A value that does not parse as a URL, or whose userinfo cannot be told
// apart from its path (an unescaped "/", "?" or "#" in a password puts part of
// it after the host), is shown only up to its host: its scheme, "xxxxx@" if
// it has an "@", and the host after the last "@", which no userinfo can
// follow; then "..." when something was left out.
package redact

import (
	"net/url"
	"strings"
)

// Mask stands in for a password, as in url.URL.Redacted.
const Mask = "xxxxx"

// Cut marks a value shown only up to its host.
const Cut = "..."

// URL is raw as it may be printed.
func URL(raw string) string {
	u, ok := Parse(raw)
	if !ok {
		return upToHost(raw)
	}
	if _, ok := u.User.Password(); ok {
		return u.Redacted()
	}
	return raw // nothing in it is a password: shown as written
}

// Parse parses raw and says whether its parts can be told apart: it is a URL,
// not opaque, and every "@" in it lies in its authority, so that url.Parse
// found the whole userinfo and left none of it in the path, query or
// fragment. Only such a URL is shown past its host.
func Parse(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || !userinfoIsAuthoritys(raw, u.Scheme) {
		return nil, false
	}
	return u, true
}

// URLs is a list of URLs as it may be printed: each one redacted, then
// joined with commas.
func URLs(raws []string) string {
	shown := make([]string, len(raws))
	for i, r := range raws {
		shown[i] = URL(r)
	}
	return strings.Join(shown, ",")
}

// Word is a word of a command line, or a value of a variable, as a message
// may quote it when it is not known to be a URL: a flag with a URL after
// its "=" (-shutdown-urls=http://u:secret@127.0.0.1/x), a cluster of short
// flags whose value is one (-Shttp://...), or a URL given to a flag that
// takes none. A word without an "@" has no userinfo, so no password, and is
// shown as written. Otherwise its leading dashes, and a flag's name up to
// its first "=", are shown as written (a name has no ":", so no password
// starts in it), and the rest as URL shows a URL.
func Word(w string) string {
	if !strings.Contains(w, "@") {
		return w
	}
	rest := strings.TrimLeft(w, "-")
	prefix := w[:len(w)-len(rest)]
	if name, value, ok := strings.Cut(rest, "="); ok && IsName(name) {
		prefix += name + "="
		rest = value
	}
	shown := URL(rest)
	if scheme, _, ok := strings.Cut(rest, "://"); ok && strings.HasPrefix(shown, strings.ToLower(scheme)+"://") {
		// url.URL.Redacted writes the scheme in lower case; in
		// -Shttp://... it starts with a flag's letter, as written.
		shown = scheme + shown[len(scheme):]
	}
	return prefix + shown
}

// IsName says whether s can be a flag's name: letters, digits, "-", "_"
// and "." (or nothing). It holds no ":", so no password of a URL starts in
// it.
func IsName(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// userinfoIsAuthoritys says whether every "@" in raw, a URL that parsed with
// the given scheme, lies in its authority: then url.Parse found the whole
// userinfo, and nothing of it is left in the path, query or fragment.
func userinfoIsAuthoritys(raw, scheme string) bool {
	at := strings.LastIndexByte(raw, '@')
	if at < 0 {
		return true
	}
	start := len(scheme)
	if scheme != "" {
		start++ // the colon
	}
	if !strings.HasPrefix(raw[start:], "//") {
		return false // an "@" and no authority
	}
	start += 2
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/?#"); i >= 0 {
		end = start + i
	}
	return at < end
}

// upToHost shows raw, which is not a URL whose parts can be told apart, as
// far as its host: everything after the last "@" of raw is past any
// userinfo, and before it, nothing is shown.
func upToHost(raw string) string {
	var b strings.Builder
	rest := raw
	if scheme, after, ok := strings.Cut(raw, ":"); ok && isScheme(scheme) {
		b.WriteString(scheme)
		b.WriteByte(':')
		rest = after
		if r, ok := strings.CutPrefix(rest, "//"); ok {
			b.WriteString("//")
			rest = r
		}
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		b.WriteString(Mask + "@")
		rest = rest[at+1:]
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	host := hostPort(authority)
	b.WriteString(host)
	if host != rest {
		b.WriteString(Cut)
	}
	return b.String()
}

// hostPort is authority's host and, if it is a decimal number, its port:
// without an "@" after it, "u:pa" is a user and the start of a password that
// a comma cut off, not a host and a port.
func hostPort(authority string) string {
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") {
		if end := strings.IndexByte(authority, ']'); end >= 0 {
			host, port = authority[:end+1], authority[end+1:]
		}
	} else if i := strings.IndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i:]
	}
	if p, ok := strings.CutPrefix(port, ":"); ok && p != "" && strings.Trim(p, "0123456789") == "" {
		return host + port
	}
	return host
}

// isScheme says whether s is a URL scheme: a letter, then letters, digits,
// "+", "-" or ".".
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// credentials.go: the words of a command that are credentials, which
// findings never show.

package invocation

import (
	"slices"
	"strings"

	"github.com/proxy-await/proxy-await/ctl/manifest"
)

// credentialFlags are the options of HTTP clients (curl, wget, HTTPie)
// whose value is a credential, in the next word or after "=".
var credentialFlags = []string{"-u", "--user", "-U", "--proxy-user", "--oauth2-bearer", "--password", "--http-password",
	"--proxy-password", "--ftp-password", "-a", "--auth", "-b", "--cookie"}

// markCredentials marks the words of a command that are credentials: the
// value of a credential option (curl -u USER:PASS, -uUSER:PASS,
// --user=USER:PASS) and a header that carries one (-H "Authorization:
// Bearer ...").
func markCredentials(words []manifest.Word) {
	for i := range words {
		t := words[i].Text
		name, _, hasValue := strings.Cut(t, "=")
		switch {
		case slices.Contains(credentialFlags, name) && hasValue,
			len(t) > 2 && t[0] == '-' && t[1] == 'u',
			credentialHeader(t):
			words[i].Secret = true
		case slices.Contains(credentialFlags, t) && i+1 < len(words):
			words[i+1].Secret = true
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
	return ok && name != "" && !strings.ContainsAny(name, " /") && (manifest.SecretName(name) || strings.EqualFold(name, "Authorization"))
}

package imageconfig

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/stretchr/testify/assert"
)

// scrub hides the credentials it was given, the token of a quoted
// Authorization header, and a URL's password, and leaves the rest as it
// was. (Go's HTTP client hides a password in the URLs of its own errors;
// a credential helper's or a registry's text is hidden here.)
func TestScrubHidesCredentials(t *testing.T) {
	hide := newSecrets(&authn.AuthConfig{Username: "ci-bot", Password: "s3cr3t", IdentityToken: "id-t0ken"})
	for _, tc := range []struct{ in, want string }{
		{"refused s3cr3t and id-t0ken", "refused xxxxx and xxxxx"},
		{"not with Basic Y2ktYm90OnMzY3IzdA==", "not with Basic xxxxx"},
		{"helper said: authorization: bearer abc.def-ghi_jkl", "helper said: authorization: bearer xxxxx"},
		{`redirected to "https://store:pa55@blobs.example/x" and gave up`, `redirected to "https://store:xxxxx@blobs.example/x" and gave up`},
		{"get https://user@registry.example/v2/ failed", "get https://user@registry.example/v2/ failed"},
		{"127.0.0.1:5000/app@sha256:0123 not found", "127.0.0.1:5000/app@sha256:0123 not found"},
	} {
		assert.Equal(t, tc.want, hide.scrub(tc.in), tc.in)
	}
	assert.Equal(t, "https://u:xxxxx@h/", (*secrets)(nil).scrub("https://u:p@h/"))
}

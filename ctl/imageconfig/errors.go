package imageconfig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/proxy-await/proxy-await/internal/redact"
)

// Reason is what kept an image's command from being found.
type Reason int

// The reasons, each with its own fix.
const (
	Invalid      Reason = iota + 1 // not an image reference, or an answer that is no image
	NotInFile                      // not in the entrypoints file, and no registry may be asked
	Unauthorized                   // the registry wants credentials, or refused those given
	NotFound                       // no such repository or tag
	NoPlatform                     // an index without the platform asked for
	TimedOut                       // no whole answer within the time bound
	TooLarge                       // a manifest or configuration past its size bound
	Unreachable                    // no connection to the registry
	RateLimited                    // the registry answered 429
	Failed                         // any other answer of the registry's
	NoCommand                      // the image gives nothing to run
)

var reasonNames = map[Reason]string{
	Invalid: "invalid", NotInFile: "not in the entrypoints file", Unauthorized: "unauthorized",
	NotFound: "not found", NoPlatform: "no such platform", TimedOut: "timed out",
	TooLarge: "too large", Unreachable: "registry not reachable", RateLimited: "rate limited",
	Failed: "registry error", NoCommand: "no command",
}

func (r Reason) String() string {
	if n, ok := reasonNames[r]; ok {
		return n
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Error is an image whose command was not found. Its text is the image,
// what happened and the fix; none of it is a credential.
type Error struct {
	Image  string // the reference as it was asked for
	Reason Reason
	Detail string // what happened
	Fix    string // what to do about it
}

func (e *Error) Error() string {
	return e.Image + ": " + e.Detail + ": " + e.Fix
}

// fromFile is the fix's second half wherever a registry cannot answer.
func fromFile(image string) string {
	return "or give its entrypoint and cmd in an --entrypoints file (crane config " + image + " shows them where the registry can be reached)"
}

// classify turns what a fetch from reg returned into an *Error for image.
// ctx is the fetch's context, tooLarge whether the size bound cut an
// answer, creds whether the Docker config gave credentials for reg, and
// hide the text that must not be shown.
func classify(image, reg string, err error, ctx context.Context, tooLarge bool, creds bool, hide *secrets) *Error {
	e := &Error{Image: image}
	var terr *transport.Error
	var dns *net.DNSError
	var op *net.OpError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var certInvalid x509.CertificateInvalidError
	var recordHeader tls.RecordHeaderError
	switch {
	case tooLarge:
		e.Reason, e.Detail = TooLarge, "an answer of registry "+reg+" was past the bound of what is read"
		e.Fix = "check that the reference names a container image, " + fromFile(image)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		e.Reason, e.Detail = TimedOut, "registry "+reg+" did not answer in time"
		e.Fix = "check the network to it and try again, " + fromFile(image)
	case errors.As(err, &terr) && (terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden):
		e.Reason = Unauthorized
		if creds {
			e.Detail = fmt.Sprintf("registry %s refused the credentials the Docker config gives for it (%s)", reg, status(terr.StatusCode))
			e.Fix = "log in again with docker login " + reg + " (the Docker config is $DOCKER_CONFIG/config.json, with its credential helpers), " + fromFile(image)
		} else {
			e.Detail = fmt.Sprintf("registry %s wants credentials and the Docker config has none for it (%s)", reg, status(terr.StatusCode))
			e.Fix = "log in with docker login " + reg + " (or name a credential helper for it in $DOCKER_CONFIG/config.json), " + fromFile(image)
		}
	case errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound:
		e.Reason, e.Detail = NotFound, fmt.Sprintf("registry %s has no such image (%s)", reg, status(terr.StatusCode))
		e.Fix = "check the image's name and tag, " + fromFile(image)
	case errors.As(err, &terr) && terr.StatusCode == http.StatusTooManyRequests:
		e.Reason, e.Detail = RateLimited, fmt.Sprintf("registry %s limits the rate of pulls (%s)", reg, status(terr.StatusCode))
		e.Fix = "log in with docker login " + reg + " for a higher limit, or try later, " + fromFile(image)
	case errors.As(err, &terr):
		e.Reason, e.Detail = Failed, "registry "+reg+" answered "+hide.scrub(terr.Error())
		e.Fix = "try again later, " + fromFile(image)
	case errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &certInvalid), errors.As(err, &recordHeader):
		e.Reason, e.Detail = Unreachable, "registry "+reg+" is not reachable over TLS: "+hide.scrub(err.Error())
		e.Fix = "trust the registry's certificate authority (SSL_CERT_FILE), " + fromFile(image)
	case errors.As(err, &dns), errors.As(err, &op):
		e.Reason, e.Detail = Unreachable, "registry "+reg+" is not reachable: "+hide.scrub(err.Error())
		e.Fix = "check its name and the network (HTTPS_PROXY, if one is needed), " + fromFile(image)
	default:
		e.Reason, e.Detail = Invalid, "reading it from registry "+reg+" failed: "+hide.scrub(err.Error())
		e.Fix = "check that the reference names a container image, " + fromFile(image)
	}
	return e
}

func status(code int) string { return fmt.Sprintf("%d %s", code, http.StatusText(code)) }

// secrets are the credentials of one registry, never to be shown.
type secrets struct{ words []string }

func newSecrets(c *authn.AuthConfig) *secrets {
	s := &secrets{}
	if c == nil {
		return s
	}
	for _, w := range []string{c.Password, c.Auth, c.IdentityToken, c.RegistryToken} {
		if w != "" {
			s.words = append(s.words, w)
		}
	}
	if c.Password != "" {
		s.words = append(s.words, base64.StdEncoding.EncodeToString([]byte(c.Username+":"+c.Password)))
	}
	return s
}

// schemeToken is the token of an Authorization header, quoted back by a
// registry or a helper whose secret is not known here.
var schemeToken = regexp.MustCompile(`(?i)\b(basic|bearer)(\s+)[A-Za-z0-9+/=._~-]+`)

// scrub is text with every secret masked, the token of every quoted
// Authorization header masked, and every URL's password masked as package
// redact masks it.
func (s *secrets) scrub(text string) string {
	if s != nil {
		for _, w := range s.words {
			text = strings.ReplaceAll(text, w, redact.Mask)
		}
	}
	text = schemeToken.ReplaceAllString(text, "${1}${2}"+redact.Mask)
	words := strings.Fields(text)
	changed := false
	for i, w := range words {
		if strings.Contains(w, "://") && strings.Contains(w, "@") {
			trimmed := strings.Trim(w, "\"'`()<>,;")
			start := strings.Index(w, trimmed)
			words[i] = w[:start] + redact.URL(trimmed) + w[start+len(trimmed):]
			changed = true
		}
	}
	if changed {
		return strings.Join(words, " ")
	}
	return text
}

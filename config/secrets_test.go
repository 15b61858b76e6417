package config

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// badURLs are values of a URL flag, each with the password "pa55w0rd" written
// in some form, that a usage error must quote without it: shown is the value
// as the error quotes it, and ready and shutdown the reasons of
// --ready-url and --shutdown-url ("" where the value is accepted).
var badURLs = []struct {
	value, shown, ready, shutdown string
}{
	{"ftp://u:pa55w0rd@127.0.0.1/r", "ftp://u:xxxxx@127.0.0.1/r", "scheme must be http or https", "scheme must be http or https"},
	{"http://u:pa55w0rd@127.0.0.1:99999/r", "http://u:xxxxx@127.0.0.1:99999/r", "not a port number: 99999", "not a port number: 99999"},
	{"http://u:pa55,w0rd@10.0.0.1/q", "http://u:xxxxx@10.0.0.1/q", "", "host 10.0.0.1 " + notLoopback},
	{"http://u:pa55@w0rd@10.0.0.1/q", "http://u:xxxxx@10.0.0.1/q", "", "host 10.0.0.1 " + notLoopback},
	{"http://u:pa55:w0rd@10.0.0.1/q", "http://u:xxxxx@10.0.0.1/q", "", "host 10.0.0.1 " + notLoopback},
	{"http://u:pa55%40w0rd@10.0.0.1/q", "http://u:xxxxx@10.0.0.1/q", "", "host 10.0.0.1 " + notLoopback},
	{"http://u:pa55%zzw0rd@127.0.0.1/r", "http://xxxxx@127.0.0.1...", "not an http or https URL", "not an http or https URL"},
	{"http://u:pa55/w0rd@127.0.0.1/r", "http://xxxxx@127.0.0.1...", "not an http or https URL", "not an http or https URL"},
	{"http://u:1234/pa55w0rd@127.0.0.1/r", "http://xxxxx@127.0.0.1...", atAfterHost, atAfterHost},
	{"http://u:pa55#w0rd@127.0.0.1/r", "http://xxxxx@127.0.0.1...", "not an http or https URL", "not an http or https URL"},
	{"http:u:pa55w0rd@127.0.0.1/r", "http:xxxxx@127.0.0.1...", atAfterHost, atAfterHost},
	{"u:pa55w0rd@127.0.0.1:9901/ready", "u:xxxxx@127.0.0.1:9901...", "scheme must be http or https", "scheme must be http or https"},
}

const atAfterHost = "an @ after the host: a user name or password with / ? or # in it"

// The password in every form it may take in a message: as written, and
// percent-decoded.
var passwordForms = []string{"pa55w0rd", "pa55", "w0rd"}

// A usage error about a URL, from its flag or its variable, quotes the URL
// without its password, whatever the password holds.
func TestURLUsageErrorsHideThePassword(t *testing.T) {
	for _, tc := range badURLs {
		for _, flag := range []string{"ready-url", "shutdown-url"} {
			reason := tc.ready
			if flag == "shutdown-url" {
				reason = tc.shutdown
			}
			env := EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
			for _, src := range []struct {
				args []string
				env  map[string]string
				want string
			}{
				{[]string{"--" + flag, tc.value, "app"}, nil, `invalid value "` + tc.shown + `" for --` + flag + ": " + reason},
				{[]string{"app"}, map[string]string{env: tc.value}, `invalid value "` + tc.shown + `" for $` + env + " (--" + flag + "): " + reason},
			} {
				_, err := Parse("proxy-await", src.args, testutil.Getenv(src.env))
				if reason == "" {
					assert.NoError(t, err, "%q %v", src.args, src.env)
					continue
				}
				var u *UsageError
				require.True(t, errors.As(err, &u), "%q %v: want a usage error, got %v", src.args, src.env, err)
				assert.Equal(t, src.want, u.Msg, "%q %v", src.args, src.env)
				noPassword(t, u.Msg+u.Hint)
			}
		}
	}
}

// In a variable's list, a comma starts the next URL only where one starts:
// a comma in a password stays in it. A wrong URL is quoted with the URLs
// before it, never with what follows it, which may be the rest of its
// password.
func TestURLListsFromTheEnvironment(t *testing.T) {
	c, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{
		"PROXY_AWAIT_READY_URL": "http://u:pa55,w0rd@127.0.0.1:1/a, https://127.0.0.1:2/b?x=1,2,3",
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://u:pa55,w0rd@127.0.0.1:1/a", "https://127.0.0.1:2/b?x=1,2,3"}, c.ReadyURLs)
	u, err := url.Parse(c.ReadyURLs[0])
	require.NoError(t, err)
	pass, _ := u.User.Password()
	assert.Equal(t, "pa55,w0rd", pass)

	for _, tc := range []struct{ value, msg string }{
		{"http://127.0.0.1:1/a,http://u:pa55,w0rd@127.0.0.1:99999/r",
			`invalid value "http://127.0.0.1:1/a,http://u:xxxxx@127.0.0.1:99999/r" for $PROXY_AWAIT_READY_URL (--ready-url): not a port number: 99999`},
		{"http://u:pa55%zz@127.0.0.1/r,http://v:w0rd@127.0.0.1/s",
			`invalid value "http://xxxxx@127.0.0.1...,..." for $PROXY_AWAIT_READY_URL (--ready-url): not an http or https URL`},
		{"http://u:pa55,http://w0rd@127.0.0.1/r",
			`invalid value "http://u...,..." for $PROXY_AWAIT_READY_URL (--ready-url): not an http or https URL`},
		{"http://u:pa55w0rd@127.0.0.1/r,",
			`invalid value "http://u:xxxxx@127.0.0.1/r," for $PROXY_AWAIT_READY_URL (--ready-url): empty item in a comma-separated list`},
		{",http://u:pa55w0rd@127.0.0.1/r",
			`invalid value ",..." for $PROXY_AWAIT_READY_URL (--ready-url): empty item in a comma-separated list`},
	} {
		_, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(map[string]string{"PROXY_AWAIT_READY_URL": tc.value}))
		var u *UsageError
		require.True(t, errors.As(err, &u), "%q: want a usage error, got %v", tc.value, err)
		assert.Equal(t, tc.msg, u.Msg, "%q", tc.value)
		noPassword(t, u.Msg)
	}
}

// scuttle's URL variables are quoted the same way.
func TestScuttleURLErrorsHideThePassword(t *testing.T) {
	for _, tc := range []struct{ variable, value, msg string }{
		{"ENVOY_ADMIN_API", "http://u:pa55%zzw0rd@127.0.0.1:15000",
			`invalid value "http://xxxxx@127.0.0.1:15000" for $ENVOY_ADMIN_API: not an http or https URL`},
		{"ENVOY_ADMIN_API", "ftp://u:pa55w0rd@127.0.0.1:15000",
			`invalid value "ftp://u:xxxxx@127.0.0.1:15000" for $ENVOY_ADMIN_API: scheme must be http or https`},
		{"ISTIO_QUIT_API", "http://u:pa55,w0rd@10.0.0.1:15020",
			`invalid value "http://u:xxxxx@10.0.0.1:15020" for $ISTIO_QUIT_API: host 10.0.0.1 ` + notLoopback},
		{"GENERIC_QUIT_ENDPOINTS", "http://127.0.0.1:1/q,http://u:pa55,w0rd@10.0.0.1/q",
			`invalid value "http://u:xxxxx@10.0.0.1/q" for $GENERIC_QUIT_ENDPOINTS: host 10.0.0.1 ` + notLoopback},
		{"GENERIC_QUIT_ENDPOINTS", "http://u:pa55/w0rd@127.0.0.1/q",
			`invalid value "http://xxxxx@127.0.0.1..." for $GENERIC_QUIT_ENDPOINTS: not an http or https URL`},
		{"GENERIC_QUIT_ENDPOINTS", "http://u:pa55w0rd@127.0.0.1/q,,",
			`invalid value "http://u:xxxxx@127.0.0.1/q," for $GENERIC_QUIT_ENDPOINTS: empty item in a comma-separated list`},
	} {
		_, err := Parse("scuttle", []string{"app"}, testutil.Getenv(map[string]string{tc.variable: tc.value}))
		var u *UsageError
		require.True(t, errors.As(err, &u), "%s=%q: want a usage error, got %v", tc.variable, tc.value, err)
		assert.Equal(t, tc.msg, u.Msg, "%s=%q", tc.variable, tc.value)
		noPassword(t, u.Msg)
	}
}

// A flag written with a third dash is quoted up to its "=": its value may
// be a URL with a password.
func TestBadFlagSyntaxHidesTheValue(t *testing.T) {
	_, err := Parse("proxy-await", []string{"---ready-url=http://u:pa55w0rd@127.0.0.1/r", "app"}, testutil.Getenv(nil))
	var u *UsageError
	require.True(t, errors.As(err, &u), "want a usage error, got %v", err)
	assert.Equal(t, "bad flag syntax: ---ready-url", u.Msg)
}

// The help shows a URL flag's value as redact does, should it ever have
// one by default.
func TestURLFlagValueHidesThePassword(t *testing.T) {
	urls := []string{"http://u:pa55,w0rd@127.0.0.1/r", "http://127.0.0.1/s"}
	assert.Equal(t, "http://u:xxxxx@127.0.0.1/r,http://127.0.0.1/s", (&urlList{urls: &urls}).String())
}

func noPassword(t *testing.T, s string) {
	t.Helper()
	for _, p := range passwordForms {
		assert.NotContains(t, s, p)
	}
}

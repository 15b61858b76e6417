package config

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"

	"github.com/proxy-await/proxy-await/internal/hint"
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
				assert.Equal(t, src.want, u.Error(), "%q %v", src.args, src.env)
				noPassword(t, u.Error()+hint.Of(u))
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
		assert.Equal(t, tc.msg, u.Error(), "%q", tc.value)
		noPassword(t, u.Error())
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
		assert.Equal(t, tc.msg, u.Error(), "%s=%q", tc.variable, tc.value)
		noPassword(t, u.Error())
	}
}

// A flag written with a third dash is quoted up to its "=": its value may
// be a URL with a password.
func TestBadFlagSyntaxHidesTheValue(t *testing.T) {
	_, err := Parse("proxy-await", []string{"---ready-url=http://u:pa55w0rd@127.0.0.1/r", "app"}, testutil.Getenv(nil))
	var u *UsageError
	require.True(t, errors.As(err, &u), "want a usage error, got %v", err)
	assert.Equal(t, "bad flag syntax: ---ready-url", u.Error())
}

// A word that is not a URL but holds one is quoted with the URL's password
// masked, by every usage error that quotes user input: a long flag typed
// with one dash (pflag reads it as a cluster of short flags), an unknown
// flag or letter, a value given to a flag that takes no URL, from the
// command line or a variable, and the command a hint names.
func TestWordsHoldingAURLHideThePassword(t *testing.T) {
	const u = "http://u:pa55w0rd@127.0.0.1:1/x"
	const shown = "http://u:xxxxx@127.0.0.1:1/x"
	for _, tc := range []struct {
		args      []string
		env       map[string]string
		msg, hint string
	}{
		// A long flag with one dash, as pflag would read it: -s..., -r
		// with the value "eady_url=...", -u.
		{[]string{"-shutdown-urls=" + u, "app"}, nil, "unknown flag -shutdown-urls", "did you mean --shutdown-url?"},
		{[]string{"-ready_url=" + u, "app"}, nil, "unknown flag -ready_url", "did you mean --ready-url?"},
		{[]string{"-url=" + u, "app"}, nil, "unknown flag -url", "see --help for the flags"},
		{[]string{"-S", "-shutdown-url=" + u, "app"}, nil, "unknown flag -shutdown-url", "did you mean --shutdown-url?"},
		// Unknown letters, in words that hold a URL.
		{[]string{"-x=" + u, "app"}, nil, "unknown flag -x in -x=" + shown, "see --help for the flags"},
		{[]string{"-Sx" + u, "app"}, nil, "unknown flag -x in -Sx" + shown, "see --help for the flags"},
		{[]string{"-xhttp://u:pa55=w0rd@127.0.0.1/", "app"}, nil, "unknown flag -x in -xhttp://u:xxxxx@127.0.0.1/", "see --help for the flags"},
		{[]string{"-x=u:pa55w0rd@127.0.0.1", "app"}, nil, "unknown flag -x in -x=u:xxxxx@127.0.0.1", "see --help for the flags"},
		// Unknown long flags: the name up to "=", or the word redacted
		// when what comes before its "=" is no flag's name.
		{[]string{"--nosuch=" + u, "app"}, nil, "unknown flag --nosuch", "see --help for the flags"},
		{[]string{"--u:pa55=w0rd@127.0.0.1", "app"}, nil, "unknown flag --u:xxxxx@127.0.0.1", "see --help for the flags"},
		{[]string{"---u:pa55=w0rd@127.0.0.1", "app"}, nil, "bad flag syntax: ---u:xxxxx@127.0.0.1", "see --help for the flags"},
		// A URL as the value of a flag that takes none.
		{[]string{"-S=" + u, "app"}, nil, `invalid value "` + shown + `" for --shutdown: must be true or false`, ""},
		{[]string{"-b" + u, "app"}, nil, `invalid value "` + shown + `" for --backoff: ` + durationReason, ""},
		{[]string{"-h" + u, "app"}, nil, `invalid value "tp://u:xxxxx@127.0.0.1:1/x" for --timeout: ` + durationReason, ""},
		{[]string{"--log-format=" + u, "app"}, nil, `invalid value "` + shown + `" for --log-format: choose text or json`, ""},
		{[]string{"--proxy=" + u, "app"}, nil, `invalid value "` + shown + `" for --proxy: ` + atInListReason, presetHint()},
		{[]string{"--proxy=http://u:pa55,w0rd@127.0.0.1/", "app"}, nil, `invalid value "http://u:xxxxx@127.0.0.1/" for --proxy: ` + atInListReason, presetHint()},
		{[]string{"-r" + u, "app"}, nil, `invalid value "` + shown + `" for --rewrite: ` + atInListReason, ""},
		{[]string{"--exit-code-map", "1:2,http://u:pa55,w0rd@h", "app"}, nil, `invalid value "xxxxx@h" for --exit-code-map: ` + atInListReason, ""},
		{[]string{"--check", "--versions=" + u, "x"}, nil, "--check is proxy-awaitctl's now: proxy-await, the pod's entrypoint, reads no manifests", "run proxy-awaitctl check --versions " + shown + " x"},
		{[]string{"--install=" + u, "app"}, nil, `invalid value "` + shown + `" for --install: it copies proxy-await and runs no command`, "drop app and what follows it"},
		{[]string{"--install", "/pa", u}, nil, `invalid value "/pa" for --install: it copies proxy-await and runs no command`, "drop " + shown + " and what follows it"},
		// The same from variables.
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_TIMEOUT": u}, `invalid value "` + shown + `" for $PROXY_AWAIT_TIMEOUT (--timeout): ` + durationReason, ""},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_PROXY": "istio," + u}, `invalid value "xxxxx@127.0.0.1:1..." for $PROXY_AWAIT_PROXY (--proxy): ` + atInListReason, presetHint()},
		{[]string{"app"}, map[string]string{"PROXY_AWAIT_LOG_FORMAT": u}, `invalid value "` + shown + `" for $PROXY_AWAIT_LOG_FORMAT (--log-format): choose text or json`, ""},
	} {
		_, err := Parse("proxy-await", tc.args, testutil.Getenv(tc.env))
		var ue *UsageError
		require.True(t, errors.As(err, &ue), "%q %v: want a usage error, got %v", tc.args, tc.env, err)
		assert.Equal(t, tc.msg, ue.Error(), "%q %v", tc.args, tc.env)
		assert.Equal(t, tc.hint, hint.Of(ue), "%q %v", tc.args, tc.env)
		noPassword(t, ue.Error()+hint.Of(ue))
	}
}

// The warnings quote what they ignore as the usage errors do.
func TestWarningsHideThePassword(t *testing.T) {
	c, err := ParseEnviron("scuttle", []string{"app"}, []string{
		"WAIT_FOR_ENVOY_TIMEOUT=http://u:pa55w0rd@127.0.0.1:1/x", "NEVER_KILL_ISTIO=http://u:pa55w0rd@127.0.0.1:1/x",
		"PROXY_AWAIT_u:pa55w0rd@127.0.0.1=1",
	})
	require.NoError(t, err)
	var msgs []string
	for _, w := range c.Warnings {
		msgs = append(msgs, w.Error())
		noPassword(t, w.Error()+w.Hint)
	}
	assert.Equal(t, []string{
		"unknown variable $xxxxx@127.0.0.1: ignored",
		`invalid value "http://u:xxxxx@127.0.0.1:1/x" for $NEVER_KILL_ISTIO: not true or false, so ignored, as scuttle ignores it`,
		`invalid value "http://u:xxxxx@127.0.0.1:1/x" for $WAIT_FOR_ENVOY_TIMEOUT: ` + durationReason + `, so ignored, as scuttle ignores it`,
	}, msgs)
}

const (
	durationReason = "not a duration (use 250ms, 1m30s, 2d or seconds)"
	atInListReason = "no item of this flag has an @: is it a URL meant for another flag?"
)

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

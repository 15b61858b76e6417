package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/internal/signals"
	"github.com/proxy-await/proxy-await/internal/testutil"

	"github.com/proxy-await/proxy-await/internal/hint"
)

// Fuzz targets for everything proxy-await reads from its command line and
// environment. Plain `go test` runs the seeds and testdata/fuzz; scripts/fuzz.sh
// fuzzes each target for a while.

// durationSeeds are the inputs of TestParseDuration and the edges around them.
var durationSeeds = []string{
	"250ms", "1m30s", "0", "15", "2d", "1d12h", "1.5d", "0s", "", "soon", "-1s", "-5", "5x", "d",
	"1d-1h", "1e3d", "99999999999999999", "300000d",
	"+5", "-0", "+0", "007", "1d+1h", "1.d", ".5d", "1d0s", "0d", "1d1d", "1dd", "d1h",
	"106751d", "106752d", "106751d23h47m16.854775807s", "106751d23h47m16.854775808s",
	"9223372036", "9223372037", "2562047h47m16.854775807s", "2562047h47m16.854775808s",
	"1h-1m", "1_000", "0x10", "1e3", "Inf", "NaN", "infd", "1µs", "1μs", "1us", ".5s", "5.s",
	"1.5.5d", " 1s", "1s ", "1\n", "1d ", " \n12s \t", "\u00a01s",
}

// daysForm is "Nd" with an integer N and anything after it.
var daysForm = regexp.MustCompile(`^([0-9]+)d(.*)$`)

// fracDays is "N.Fd" alone.
var fracDays = regexp.MustCompile(`^([0-9]*\.[0-9]*)d$`)

func FuzzDuration(f *testing.F) {
	for _, s := range durationSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseDuration(s)
		if err != nil {
			assert.NotEmpty(t, err.Error())
			assert.Zero(t, got, "a failed parse returns 0")
		} else {
			require.GreaterOrEqual(t, got, time.Duration(0), "%q parsed to a negative duration", s)
		}

		// Spaces around a duration do not count, as for linkerd-await.
		if trimmed := strings.TrimSpace(s); trimmed != s {
			again, errAgain := parseDuration(trimmed)
			assert.Equal(t, err == nil, errAgain == nil, "%q and %q", s, trimmed)
			assert.Equal(t, again, got, "%q and %q", s, trimmed)
			return
		}

		// Go syntax means what it means to time.ParseDuration. A leading
		// "-" is refused even on zero ("-0s"): the sign says negative.
		if v, goErr := time.ParseDuration(s); goErr == nil {
			switch {
			case v < 0:
				require.Error(t, err, "%q is negative (%v)", s, v)
			case !strings.HasPrefix(s, "-"):
				require.NoError(t, err, "%q is a valid Go duration", s)
				assert.Equal(t, v, got, "%q", s)
			}
		}

		// A bare integer is seconds.
		if n, intErr := strconv.ParseInt(s, 10, 64); intErr == nil {
			switch {
			case n < 0 || strings.HasPrefix(s, "-"):
				require.Error(t, err, "%q is negative, or signed as negative", s)
			case n <= math.MaxInt64/int64(time.Second):
				require.NoError(t, err, "%q is a number of seconds", s)
				assert.Equal(t, time.Duration(n)*time.Second, got, "%q", s)
			default:
				require.Error(t, err, "%q seconds overflow a duration", s)
			}
		}

		// "Nd" is N times 24h, plus what follows in Go syntax.
		if m := daysForm.FindStringSubmatch(s); m != nil {
			n, dayErr := strconv.ParseInt(m[1], 10, 64)
			if dayErr != nil || n > math.MaxInt64/int64(day) {
				require.Error(t, err, "%q days overflow a duration", s)
				return
			}
			days := time.Duration(n) * day
			rest := m[2]
			if rest == "" {
				require.NoError(t, err, "%q is a number of days", s)
				assert.Equal(t, days, got, "%q", s)
				return
			}
			r, restErr := time.ParseDuration(rest)
			switch {
			case restErr != nil:
				require.Error(t, err, "%q: %q after the days is not a Go duration", s, rest)
			case r < 0 || strings.HasPrefix(rest, "-"):
				require.Error(t, err, "%q: %q after the days is negative", s, rest)
			case r > math.MaxInt64-days:
				require.Error(t, err, "%q overflows a duration", s)
			default:
				require.NoError(t, err, "%q is days and a Go duration", s)
				assert.Equal(t, days+r, got, "%q", s)
			}
		}

		// "N.Fd" lies between floor(N) and ceil(N) days.
		if m := fracDays.FindStringSubmatch(s); m != nil && err == nil {
			n, _ := strconv.ParseFloat(m[1], 64)
			lo, hi := math.Floor(n)*float64(day), math.Ceil(n)*float64(day)
			assert.True(t, float64(got) >= lo && float64(got) <= hi, "%q parsed to %v", s, got)
		}
	})
}

// urlSeeds are the URLs of config_test.go and the tricky ones around them.
var urlSeeds = []string{
	"http://127.0.0.1:4191/ready", "http://127.0.0.1:4191/shutdown", "http://[::1]:2/b", "https://localhost/c",
	"http://127.0.0.2:9/quit", "127.0.0.1:4191/ready", "http:///ready", "http://127.0.0.1:99999/",
	"http://example.com/shutdown", "http://[::2]/q", "http://10.1.1.1/b", "http://envoy:9901",
	"HTTP://LOCALHOST:1/q", "http://user:pw@127.0.0.1/", "http://evil.com@127.0.0.1/", "http://127.0.0.1@evil.com/",
	"http://127.0.0.1:0/", "http://127.0.0.1:/", "http://127.0.0.1:65535/", "http://127.0.0.1:065535/",
	"http://[::ffff:127.0.0.1]/", "http://[fe80::1%25eth0]/", "http://[::1%25lo]/", "http://[127.0.0.1]/",
	"ftp://127.0.0.1/", "http:127.0.0.1", "//127.0.0.1/", "http://127.1/", "http://0x7f.0.0.1/",
	"http://localhost./", "http://localhost.evil.com/", "http://127.0.0.1.nip.io/", "http://127.0.0.1#@evil/",
	"http://127.0.0.1?@evil/", "http://%31%32%37.0.0.1/", "", " ", "http://", "https://[::1]:443",
}

func FuzzCheckURL(f *testing.F) {
	for _, u := range urlSeeds {
		f.Add(u, true)
		f.Add(u, false)
	}
	f.Fuzz(func(t *testing.T, raw string, loopback bool) {
		err := checkURL(raw, loopback)
		if err != nil {
			assert.NotEmpty(t, err.Error())
			return
		}
		u, perr := url.Parse(raw)
		require.NoError(t, perr, "accepted %q, which does not parse", raw)
		assert.Contains(t, []string{"http", "https"}, u.Scheme, "accepted %q", raw)
		require.NotEmpty(t, u.Hostname(), "accepted %q without a host", raw)
		if p := u.Port(); p != "" {
			n, err := strconv.Atoi(p)
			assert.True(t, err == nil && n >= 1 && n <= 65535, "accepted %q with port %q", raw, p)
		}
		if loopback {
			assert.True(t, loopbackHost(u.Hostname()), "accepted %q as loopback; its host is %q", raw, u.Hostname())
			assert.NoError(t, checkURL(raw, false), "%q is loopback but not a URL", raw)
		}
	})
}

// loopbackHost is the rule for shutdown URLs written out again: localhost in
// any ASCII case, or an address in 127.0.0.0/8 or ::1.
func loopbackHost(host string) bool {
	if len(host) == len("localhost") && strings.ToLower(host) == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// FuzzEnvConfig feeds fuzzed PROXY_AWAIT_* variables to parseConfig.
func FuzzEnvConfig(f *testing.F) {
	vars := []string{
		"PROXY_AWAIT_PROXY", "PROXY_AWAIT_PORT", "PROXY_AWAIT_READY_URL", "PROXY_AWAIT_SHUTDOWN_URL",
		"PROXY_AWAIT_BACKOFF", "PROXY_AWAIT_SHUTDOWN_TIMEOUT", "PROXY_AWAIT_TERM_DELAY", "PROXY_AWAIT_DRAIN_QUIET",
		"PROXY_AWAIT_REWRITE",
	}
	type seed struct{ proxy, port, ready, shutdown, backoff, shutdownTimeout, termDelay, drainQuiet, rewrite string }
	for _, s := range []seed{
		{},
		{"envoy", "9901", "", "", "100ms", "3s", "20s", "", "TERM:USR1,HUP:0"},
		{"", "", "http://127.0.0.1:1/a,http://127.0.0.1:2/b", "http://localhost:1/q", "", "", "", "", ""},
		{"none", "1", "", "", "", "", "", "", ""},
		{"", "70000", "", "", "", "", "", "", ""},
		{"", "http", "", "", "", "", "", "", ""},
		{"consul", "", "", "", "", "", "", "", ""},
		{"istio", "", "", "http://127.0.0.2:9/quit", "", "", "", "", ""},
		{"", "", "", "http://127.0.0.1/a,http://10.1.1.1/b", "", "", "", "", ""},
		{"", "", "127.0.0.1:4191/ready", "", "", "", "", "", ""},
		{"", "", "", "", "0", "0s", "", "", ""},
		{"", "", "", "", "soon", "-1s", "", "", ""},
		{"", "", "", "", "", "", "", "1s", ""},
		{"", "", "", "", "", "", "30s", "2s", "INT:TERM"},
		{"", "", "", "", "", "", "", "", "FOO:BAR"},
		{"", "", "", "", "", "", "", "", "KILL:TERM"},
		{"", "", "", "", "", "", "", "", "TERM:99"},
		{"", "", "", "", "", "", "", "", "TERM"},
		{"", "", "", "", "1d12h", "15", "2d", "1.5d", "sigint:0,1:15,WINCH:SIGHUP"},
	} {
		f.Add(s.proxy, s.port, s.ready, s.shutdown, s.backoff, s.shutdownTimeout, s.termDelay, s.drainQuiet, s.rewrite)
	}
	f.Fuzz(func(t *testing.T, proxy, port, ready, shutdown, backoff, shutdownTimeout, termDelay, drainQuiet, rewrite string) {
		values := []string{proxy, port, ready, shutdown, backoff, shutdownTimeout, termDelay, drainQuiet, rewrite}
		kv := map[string]string{}
		for i, v := range vars {
			kv[v] = values[i]
		}
		c, err := Parse("proxy-await", []string{"app"}, testutil.Getenv(kv))
		checkParsed(t, c, err, vars)

		// White space around a value does not count.
		padded := map[string]string{}
		for k, v := range kv {
			padded[k] = " " + v + "\n"
		}
		again, errAgain := Parse("proxy-await", []string{"app"}, testutil.Getenv(padded))
		assert.Equal(t, fmt.Sprint(err), fmt.Sprint(errAgain), "the same values with white space around them")
		assert.Equal(t, c, again, "the same values with white space around them")
	})
}

// FuzzCommandLine feeds fuzzed arguments to parseConfig: an error is one
// line (and a one-line hint), and no boolean flag is ever followed by a
// command named true or false unless "--" comes between.
func FuzzCommandLine(f *testing.F) {
	for _, args := range [][4]string{
		{"--timeout-fatal", "false", "--", "app"},
		{"-S", "false", "", ""},
		{"-S", "--", "false", ""},
		{"-gS", "true", "", ""},
		{"-gS=false", "true", "", ""},
		{"-t", "--", "true", ""},
		{"-t", "5s", "false", ""},
		{"--shutdwon", "", "", ""},
		{"-shutdown", "", "", ""},
		{"-timeout=5s", "app", "", ""},
		{"--ready-url", "http://127.0.0.1:1/ready?a=1,2", "app", ""},
		{"--ready-url", "http://127.0.0.1/a,http://127.0.0.1/b", "", ""},
		{"-p", "010", "-r", "RTMIN+1:RTMAX-1,TERM:0"},
		{"-vq", "FALSE", "", ""},
		{"--log-format", "json", "--bogus", ""},
		{"-\xff", "", "", ""},
		{"--a\nb", "", "", ""},
		{"-p", "-S", "app", ""},
		{"-", "-S", "false", ""},
		{"-test.v", "-S", "false", ""},
		{"-S", "", "", ""},
		{"-gS", "--", "", ""},
		{"--proxy", "Istio", "-p", "15000"},
		{"--exit-code-map", "1:2,1:3", "app", ""},
		{"--bogus", "--log-format", "json", ""},
		{"--", "", "", ""},
		{"--ready-url", "0/%", "0", "0"},
		{"--ready-url=http://u:p@h/x/%", "app", "", ""},
		{"-shutdown-urls=http://u:p@127.0.0.1:1/x", "app", "", ""},
		{"-ready_url=http://u:p@127.0.0.1:1/x", "app", "", ""},
		{"-url=http://u:p@127.0.0.1:1/x", "app", "", ""},
		{"-x=http://u:p@h/", "app", "", ""},
		{"--nosuch=http://u:p@h/", "app", "", ""},
		{"-Sxhttp://u:p@h/", "app", "", ""},
		{"-S=http://u:p@h/", "app", "", ""},
		{"-rhttp://u:p,ss@h/", "app", "", ""},
		{"--proxy", "istio,http://u:p@h/", "app", ""},
		{"--install", "/pa", "http://u:p@h/", ""},
		{"-gS=false", "-vt=5s", "app", ""},
	} {
		f.Add(args[0], args[1], args[2], args[3])
	}
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		var args []string
		for _, s := range []string{a, b, c, d} {
			if s != "" {
				args = append(args, s)
			}
		}
		cfg, err := Parse("proxy-await", args, testutil.Getenv(nil))
		if err != nil {
			var u *UsageError
			require.True(t, errors.As(err, &u), "want a *usageError, got %T: %v", err, err)
			require.NotEmpty(t, u.Error())
			assert.NotContains(t, u.Error(), "\n", "usage error on more than one line: %q", u.Error())
			assert.NotContains(t, hint.Of(u), "\n", "hint on more than one line: %q", hint.Of(u))
			// A value the error quotes is one the user wrote, or a URL
			// the user wrote as package redact shows it: never a "true"
			// that -S stands for.
			if m := quotedValue.FindStringSubmatch(u.Error()); m != nil {
				v, qerr := strconv.Unquote(m[1])
				require.NoError(t, qerr, "%q", u.Error())
				assert.True(t, quotesWritten(args, v), "%q quotes %q, which is not in %q", u.Error(), v, args)
			}
			return
		}
		require.NotNil(t, cfg)
		if cfg.Help || cfg.Version {
			return
		}
		n := len(args) - len(cfg.Command)
		require.GreaterOrEqual(t, n, 0)
		assert.Equal(t, strings.Join(args[n:], "\x00"), strings.Join(cfg.Command, "\x00"), "the command is what follows the flags")
		if len(cfg.Command) == 0 || n == 0 {
			return
		}
		w, before := strings.ToLower(cfg.Command[0]), args[n-1]
		if w != "true" && w != "false" {
			return
		}
		if name, ok := strings.CutPrefix(before, "--"); ok && !strings.Contains(name, "=") {
			if fl := flagSet(&Config{}).Lookup(name); fl != nil {
				assert.NotEqual(t, "bool", fl.Value.Type(), "%q ran the command %q", args, cfg.Command[0])
			}
		}
	})
}

// quotesWritten says whether v, a value a usage error quotes, is part of
// args or the redacted form of one of them (or of what follows a flag's
// letter or its "=").
func quotesWritten(args []string, v string) bool {
	if strings.Contains(strings.Join(args, "\x00"), v) {
		return true
	}
	for _, a := range args {
		for i := range len(a) + 1 {
			if redact.URL(a[i:]) == v || redact.Word(a[i:]) == v {
				return true
			}
		}
	}
	return false
}

// FuzzOneDashForms puts a URL whose password the fuzzer varies into the
// words a typo makes of a flag, with a name the fuzzer varies too: a long
// flag typed with one dash (-shutdown-urls=URL, read as a cluster of short
// flags), short flags run into the URL (-SURL), an unknown long flag
// (--NAME=URL), a URL without a scheme, after other flags and as the
// command a hint names, and as the value of a variable PROXY_AWAIT_NAME.
// Whatever proxy-await refuses or warns of, the password is nowhere in the
// message, the hint or a warning, raw, percent-decoded or in any case.
func FuzzOneDashForms(f *testing.F) {
	names := []string{"shutdown-urls", "ready_url", "url", "x", "nosuch", "S", "Sx", "rewrite", "r", "proxy", "b", "h",
		"timeout", "gS", "vt", "", "-", "log-format", "versions", "check", "exit-code-map", "install", "p"}
	passwords := []string{"secret", "pa,ss", "p@ss", "p:ss", "p=ss", "p%40ss", "p%zzss", "pa/ss", "pa?ss", "pa#ss",
		",http://127.0.0.1:1/ready", "p ss", "1234", "p@127.0.0.1:1/x,", "-S", "=", "TERM:USR1,"}
	for i, name := range names {
		for j, p := range passwords {
			f.Add(name, p, uint8(i*len(passwords)+j))
		}
	}
	const mark = "qz7" // compared in lower case: "Qz7" and "QZ7" are the same mark
	f.Fuzz(func(t *testing.T, name, fuzzed string, shape uint8) {
		if strings.Contains(strings.ToLower(name), mark) {
			return // the name is not secret: a match in it is no leak
		}
		pass := "Qz7" + fuzzed + "Qz7"
		u := "http://user:" + pass + "@127.0.0.1:1/x"
		word := []string{
			"-" + name + "=" + u,
			"-" + name + u,
			"--" + name + "=" + u,
			"-" + name + "=user:" + pass + "@127.0.0.1",
		}[shape%4]
		args := [][]string{
			{word, "app"},
			{"-v", word, "app"},
			{"--check", word, "x"},
			{"--install", "/pa", word},
		}[shape/4%4]
		var env []string
		if shape/16%2 == 1 {
			env = []string{EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "=" + u}
		}
		var shown []string
		c, err := ParseEnviron("proxy-await", args, env)
		var ue *UsageError
		switch {
		case errors.As(err, &ue):
			shown = append(shown, ue.Error(), hint.Of(ue))
		case err != nil:
			t.Fatalf("%q %q: want a usage error, got %T: %v", args, env, err, err)
		default:
			for _, w := range c.Warnings {
				shown = append(shown, w.Error(), w.Hint)
			}
		}
		for _, s := range shown {
			s = strings.ToLower(s)
			assert.NotContains(t, s, mark, "%q %q: %q", args, env, shown)
			if dec, err := url.PathUnescape(s); err == nil {
				assert.NotContains(t, strings.ToLower(dec), mark, "%q %q: %q", args, env, shown)
			}
		}
	})
}

// quotedValue finds the value a usage error quotes.
var quotedValue = regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for `)

// FuzzScuttleEnv feeds fuzzed scuttle variables to parseConfig as "scuttle".
func FuzzScuttleEnv(f *testing.F) {
	vars := []string{
		"ENVOY_ADMIN_API", "ISTIO_QUIT_API", "GENERIC_QUIT_ENDPOINTS", "WAIT_FOR_ENVOY_TIMEOUT",
		"QUIT_WITHOUT_ENVOY_TIMEOUT", "NEVER_KILL_ISTIO", "PROXY_AWAIT_PROXY", "PROXY_AWAIT_SHUTDOWN_URL",
	}
	type seed struct{ admin, istio, generic, wait, quit, never, proxy, shutdown string }
	for _, s := range []seed{
		{},
		{admin: "http://127.0.0.1:15000"},
		{admin: "http://127.0.0.1:15000/", istio: "http://localhost:15020"},
		{admin: "http://envoy:9901"},
		{admin: "http://127.0.0.1:9901", never: "true"},
		{admin: "http://127.0.0.1:9901", proxy: "linkerd"},
		{admin: "127.0.0.1:15000"},
		{istio: "127.0.0.1:15000"},
		{istio: "http://10.0.0.1:15020"},
		{wait: "127.0.0.1:15000"},
		{quit: "127.0.0.1:15000"},
		{never: "127.0.0.1:15000"},
		{wait: "30s", quit: "1m"},
		{wait: "-1s"},
		{generic: "http://127.0.0.1:1/q, http://[::1]:2/q"},
		{generic: "http://127.0.0.1:1/q,,"},
		{generic: "http://example.com/q"},
		{admin: " http://127.0.0.1:15000// ", generic: "https://localhost/q", shutdown: "http://127.0.0.1:3/s"},
		{admin: "http://127.0.0.1:15000?x", proxy: "none"},
		{admin: "http://[::1]:15000", wait: "2d", never: "false"},
		{admin: "http://127.0.0.1:15000", wait: "2s", quit: "0"},
		{admin: "http://127.0.0.1:15000", wait: "0", quit: "0s", never: "TRUE"},
		{admin: "http://127.0.0.1:15000", wait: "2s", quit: "soon", never: "1"},
	} {
		f.Add(s.admin, s.istio, s.generic, s.wait, s.quit, s.never, s.proxy, s.shutdown)
	}
	f.Fuzz(func(t *testing.T, admin, istio, generic, wait, quit, never, proxy, shutdown string) {
		values := []string{admin, istio, generic, wait, quit, never, proxy, shutdown}
		kv := map[string]string{"QUIT_REQUEST_TIMEOUT": quit, "SCUTTLE_LOGGING": never}
		for i, v := range vars {
			kv[v] = values[i]
		}
		c, err := Parse("scuttle", []string{"app"}, testutil.Getenv(kv))
		checkParsed(t, c, err, append(vars, "QUIT_REQUEST_TIMEOUT", "SCUTTLE_LOGGING"))

		// scuttle ignores a boolean or a duration it cannot read: so does
		// proxy-await as scuttle, with a one-line warning, never a usage
		// error.
		var u *UsageError
		if errors.As(err, &u) {
			for _, v := range []string{"WAIT_FOR_ENVOY_TIMEOUT", "QUIT_WITHOUT_ENVOY_TIMEOUT", "QUIT_REQUEST_TIMEOUT", "NEVER_KILL_ISTIO", "SCUTTLE_LOGGING"} {
				assert.NotContains(t, u.Error(), "$"+v, "a value scuttle ignores is not a usage error")
			}
			return
		}
		for _, w := range c.Warnings {
			assert.NotContains(t, w.Error(), "\n", "warning on more than one line: %q", w.Error())
			assert.NotContains(t, w.Error(), "\r", "warning on more than one line: %q", w.Error())
		}
		// The timeouts as scuttle's waitForEnvoy picks them: the first of
		// QUIT_WITHOUT_ENVOY_TIMEOUT and WAIT_FOR_ENVOY_TIMEOUT that is more
		// than 0.
		q, errQ := parseDuration(quit)
		w, errW := parseDuration(wait)
		switch {
		case errQ == nil && q > 0:
			assert.Equal(t, q, c.Timeout)
			assert.True(t, c.TimeoutFatal)
		case errW == nil && w > 0:
			assert.Equal(t, w, c.Timeout)
			assert.False(t, c.TimeoutFatal)
		default:
			assert.Zero(t, c.Timeout)
			assert.True(t, c.TimeoutFatal)
		}
		if strings.TrimSpace(never) == "true" {
			assert.False(t, c.Shutdown, "NEVER_KILL_ISTIO=true")
		}
	})
}

// checkParsed holds parseConfig to its contract: a one-line usage error that
// names one of vars or its flag, or a config whose invariants hold.
func checkParsed(t *testing.T, c *Config, err error, vars []string) {
	t.Helper()
	if err != nil {
		var u *UsageError
		require.True(t, errors.As(err, &u), "want a *usageError, got %T: %v", err, err)
		require.NotEmpty(t, u.Error())
		assert.NotContains(t, u.Error(), "\n", "usage error on more than one line: %q", u.Error())
		assert.NotContains(t, u.Error(), "\r", "usage error on more than one line: %q", u.Error())
		named := false
		for _, v := range vars {
			flag := "--" + strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(v, EnvPrefix), "_", "-"))
			if strings.Contains(u.Error(), "$"+v) || (strings.HasPrefix(v, EnvPrefix) && strings.Contains(u.Error(), flag)) {
				named = true
			}
		}
		assert.True(t, named, "usage error names none of %v: %q", vars, u.Error())
		return
	}
	require.NotNil(t, c)
	for _, s := range c.ShutdownURLs {
		assert.NoError(t, checkURL(s, true), "shutdown URL %q", s)
	}
	for _, r := range c.ReadyURLs {
		assert.NoError(t, checkURL(r, false), "readiness URL %q", r)
	}
	for name, d := range map[string]time.Duration{
		"timeout": c.Timeout, "term-delay": c.TermDelay, "drain-quiet": c.DrainQuiet, "kill-after": c.KillAfter,
	} {
		assert.GreaterOrEqual(t, d, time.Duration(0), "--%s", name)
	}
	for name, d := range map[string]time.Duration{
		"backoff": c.Backoff, "probe-timeout": c.ProbeTimeout, "shutdown-timeout": c.ShutdownTimeout,
	} {
		assert.Greater(t, d, time.Duration(0), "--%s", name)
	}
	if c.DrainQuiet > 0 {
		assert.Greater(t, c.TermDelay, time.Duration(0), "--drain-quiet needs --term-delay")
	}
	require.NotEmpty(t, c.Proxies)
	for _, name := range c.Proxies {
		assert.Contains(t, presetNames(), name)
	}
	if len(c.Proxies) > 1 {
		assert.NotContains(t, c.Proxies, "none")
	}
	assert.True(t, c.Port >= 0 && c.Port <= 65535, "port %d", c.Port)
	assert.Contains(t, []string{"text", "json"}, c.LogFormat)
	for from, to := range c.Rewrite {
		f, tt, err := signals.ParseRewrite(fmt.Sprintf("%d:%d", from, to))
		assert.NoError(t, err, "rewrite %d:%d", from, to)
		assert.Equal(t, [2]int{int(from), int(to)}, [2]int{int(f), int(tt)})
	}
	assert.NotEmpty(t, c.Command)
}

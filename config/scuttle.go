package config

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/internal/redact"
)

// applyScuttle maps scuttle's environment onto proxy-await's settings, for
// images that switch from scuttle by linking proxy-await as "scuttle". What
// the command line or a PROXY_AWAIT_* variable sets explicitly wins.
//
//	ENVOY_ADMIN_API=URL           wait for URL/ready (Envoy answers 200 once LIVE, as
//	                              scuttle's /server_info poll does); if URL is loopback,
//	                              also POST URL/quitquitquit at the end; on Istio's
//	                              admin port 15000, also Istio's pilot-agent
//	                              http://127.0.0.1:15020/quitquitquit unless ISTIO_QUIT_API says
//	ISTIO_QUIT_API=URL            POST URL/quitquitquit at the end
//	GENERIC_QUIT_ENDPOINTS=U1,U2  POST each URL at the end (loopback only here)
//	START_WITHOUT_ENVOY=true      do not wait (still shut down)
//	WAIT_FOR_ENVOY_TIMEOUT=D      --timeout D --timeout-fatal=false
//	QUIT_WITHOUT_ENVOY_TIMEOUT=D  --timeout D --timeout-fatal (wins over the one above)
//	NEVER_KILL_ISTIO=true         no shutdown at all
//	NEVER_KILL_ISTIO_ON_FAILURE=true  no shutdown when the command failed
//	SCUTTLE_LOGGING=false         --quiet
//
// Where scuttle misbehaves, proxy-await does not copy it: the proxy is shut
// down on every exit path (scuttle leaves it running when the command cannot
// start or the wait times out), a timeout exits 69 (scuttle: 1), and quit
// answers of 5xx are retried.
func applyScuttle(c *Config, fs *pflag.FlagSet, getenv func(string) (string, bool)) error {
	env := func(name string) string {
		v, _ := getenv(name)
		return strings.TrimSpace(v)
	}
	boolean := func(name string) (bool, error) {
		v := env(name)
		if v == "" {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, usagef("", "invalid value %q for $%s: must be true or false", v, name)
		}
		return b, nil
	}
	explicit := fs.Changed

	if !explicit("proxy") {
		c.Proxies = []string{"none"} // scuttle does nothing special without ENVOY_ADMIN_API
	}
	var ready, quit []string
	if admin := strings.TrimSuffix(env("ENVOY_ADMIN_API"), "/"); admin != "" {
		u, err := scuttleURL("ENVOY_ADMIN_API", admin, false)
		if err != nil {
			return err
		}
		ready = append(ready, admin+"/ready")
		if isLoopback(u.Hostname()) {
			quit = append(quit, admin+"/quitquitquit")
			if u.Port() == "15000" && env("ISTIO_QUIT_API") == "" {
				quit = append(quit, "http://127.0.0.1:15020/quitquitquit")
			}
		}
	}
	if istio := strings.TrimSuffix(env("ISTIO_QUIT_API"), "/"); istio != "" {
		if _, err := scuttleURL("ISTIO_QUIT_API", istio, true); err != nil {
			return err
		}
		quit = append(quit, istio+"/quitquitquit")
	}
	if generic, variable := env("GENERIC_QUIT_ENDPOINTS"), "GENERIC_QUIT_ENDPOINTS"; generic != "" {
		for _, u := range urlItems(generic) {
			if strayComma(u) {
				return usagef("", "invalid value %q for $%s: %v", redact.URL(u), variable, errEmptyItem)
			}
			if _, err := scuttleURL(variable, u, true); err != nil {
				return err
			}
			quit = append(quit, u)
		}
	}
	if !explicit("ready-url") && ready != nil {
		c.ReadyURLs = ready
	}
	if !explicit("shutdown-url") && quit != nil {
		c.ShutdownURLs = quit
	}

	never, err := boolean("NEVER_KILL_ISTIO")
	if err != nil {
		return err
	}
	if !explicit("shutdown") {
		c.Shutdown = len(quit) > 0 && !never && len(c.Command) > 0 // without a command: only wait
	}
	if c.ShutdownOnlyOK, err = boolean("NEVER_KILL_ISTIO_ON_FAILURE"); err != nil {
		return err
	}
	startWithout, err := boolean("START_WITHOUT_ENVOY")
	if err != nil {
		return err
	}
	c.Disabled = c.Disabled || startWithout

	for _, t := range []struct {
		name  string
		fatal bool
	}{{"WAIT_FOR_ENVOY_TIMEOUT", false}, {"QUIT_WITHOUT_ENVOY_TIMEOUT", true}} {
		v := env(t.name)
		if v == "" {
			continue
		}
		d, err := parseDuration(v)
		if err != nil {
			return usagef("", "invalid value %q for $%s: %v", v, t.name, err)
		}
		if !explicit("timeout") {
			c.Timeout = d
		}
		if !explicit("timeout-fatal") {
			c.TimeoutFatal = t.fatal
		}
	}

	if v := env("SCUTTLE_LOGGING"); v != "" && !explicit("quiet") && !explicit("verbose") {
		on, err := boolean("SCUTTLE_LOGGING")
		if err != nil {
			return err
		}
		c.Quiet = !on
	}
	return nil
}

// scuttleURL checks a URL from one of scuttle's variables. Its error shows
// the URL as package redact does.
func scuttleURL(variable, raw string, loopback bool) (*url.URL, error) {
	if err := checkURL(raw, loopback); err != nil {
		return nil, usagef(hintFor(err, ""), "invalid value %q for $%s: %v", redact.URL(raw), variable, err)
	}
	return url.Parse(raw)
}

package config

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/proxies"
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
//	GENERIC_QUIT_ONLY=true        POST only those: not Envoy's or Istio's quitquitquit,
//	                              and whatever NEVER_KILL_ISTIO* say (as kill() in
//	                              kvij/scuttle main.go, whose first case it is)
//	START_WITHOUT_ENVOY=true      do not wait (still shut down)
//	WAIT_FOR_ENVOY_TIMEOUT=D      --timeout D --timeout-fatal=false
//	QUIT_WITHOUT_ENVOY_TIMEOUT=D  --timeout D --timeout-fatal (wins over the one above)
//	QUIT_REQUEST_TIMEOUT=D        --shutdown-timeout D (scuttle's default is 5s, as ours)
//	NEVER_KILL_ISTIO=true         no shutdown at all
//	NEVER_KILL_ISTIO_ON_FAILURE=true  --keep-proxy-on-failure (with a shutdown to skip)
//	SCUTTLE_LOGGING=false         --quiet
//
// Values are read as scuttle reads them (scuttle_config.go, getBoolFromEnv
// and getDurationFromEnv): a boolean is exactly true or false, a duration of
// 0 is not set, and any other value is ignored, with a warning where scuttle
// logs "Invalid value will be ignored", never a usage error that would
// crash-loop a pod that ran under scuttle. Durations also take proxy-await's
// own forms (15 for seconds, 2d), which scuttle would ignore.
//
// Where scuttle misbehaves, proxy-await does not copy it: the proxy is shut
// down on every exit path (scuttle leaves it running when the command cannot
// start or the wait times out), a timeout exits 69 (scuttle: 1), and quit
// answers of 5xx are retried.
func applyScuttle(c *Config, fs *pflag.FlagSet, getenv func(string) (string, bool)) error {
	e := &scuttleEnv{c: c, getenv: getenv, explicit: fs.Changed}
	if !e.explicit("proxy") {
		c.Proxies = []string{"none"} // scuttle does nothing special without ENVOY_ADMIN_API
	}
	// GENERIC_QUIT_ONLY leaves Envoy's and Istio's quit URLs out, unread:
	// scuttle never POSTs them then.
	genericOnly := e.boolean("GENERIC_QUIT_ONLY", false)
	u, err := e.urls(genericOnly)
	if err != nil {
		return err
	}
	e.useURLs(u)
	e.shutdown(genericOnly, len(u.quit) > 0)
	e.timeouts()
	if logging := e.boolean("SCUTTLE_LOGGING", true); !e.explicit("quiet") && !e.explicit("verbose") {
		c.Quiet = !logging
	}
	return nil
}

// scuttleEnv is scuttle's environment as applyScuttle reads it into c.
type scuttleEnv struct {
	c        *Config
	getenv   func(string) (string, bool)
	explicit func(flag string) bool // set on the command line or by a PROXY_AWAIT_* variable
}

func (e *scuttleEnv) get(name string) string {
	v, _ := e.getenv(name)
	return v
}

// boolean is the variable name as scuttle reads a boolean: exactly true or
// false, else def, with a warning for a value that is neither.
func (e *scuttleEnv) boolean(name string, def bool) bool {
	switch v := e.get(name); v {
	case "true", "false":
		return v == "true"
	case "":
	default:
		e.c.Warnings = append(e.c.Warnings, warnf("write true or false",
			"invalid value %q for $%s: not true or false, so ignored, as scuttle ignores it", redact.Word(v), name))
	}
	return def
}

// duration is the variable name as a duration, 0 when it is not set, with a
// warning for a value that is not one.
func (e *scuttleEnv) duration(name string) time.Duration {
	v := e.get(name)
	if v == "" {
		return 0
	}
	d, err := parseDuration(v)
	if err != nil {
		e.c.Warnings = append(e.c.Warnings, warnf("write a duration such as 30s",
			"invalid value %q for $%s: %v, so ignored, as scuttle ignores it", redact.Word(v), name, err))
	}
	return d
}

// scuttleURLs are the URLs scuttle's variables name. envoy are those of the
// proxy at ENVOY_ADMIN_API and of Istio's pilot-agent, which runs beside
// it: its readiness URL is theirs. A generic endpoint is another proxy's.
type scuttleURLs struct {
	ready, quit, envoy []string
}

// urls reads ENVOY_ADMIN_API, ISTIO_QUIT_API and GENERIC_QUIT_ENDPOINTS.
func (e *scuttleEnv) urls(genericOnly bool) (scuttleURLs, error) {
	var s scuttleURLs
	// Envoy's admin API, and Istio's pilot-agent beside it.
	envoy, istio := proxies.Scuttle.Envoy, proxies.Scuttle.Istio
	if admin := strings.TrimSuffix(e.get("ENVOY_ADMIN_API"), "/"); admin != "" {
		u, err := scuttleURL("ENVOY_ADMIN_API", admin, false)
		if err != nil {
			return s, err
		}
		s.ready = append(s.ready, admin+envoy.Ready.Path)
		if !genericOnly && IsLoopback(u.Hostname()) {
			s.quit = append(s.quit, admin+envoy.Shutdown.Path)
			// The envoy preset's port is the one Istio gives its Envoy.
			if u.Port() == strconv.Itoa(envoy.DefaultPort()) && e.get("ISTIO_QUIT_API") == "" {
				_, quit := istio.URLs(0)
				s.quit = append(s.quit, quit)
			}
		}
		s.envoy = append(s.envoy, s.ready...)
		s.envoy = append(s.envoy, s.quit...)
	}
	if api := strings.TrimSuffix(e.get("ISTIO_QUIT_API"), "/"); api != "" && !genericOnly {
		if _, err := scuttleURL("ISTIO_QUIT_API", api, true); err != nil {
			return s, err
		}
		s.quit = append(s.quit, api+istio.Shutdown.Path)
		s.envoy = append(s.envoy, api+istio.Shutdown.Path)
	}
	if generic, variable := e.get("GENERIC_QUIT_ENDPOINTS"), "GENERIC_QUIT_ENDPOINTS"; generic != "" {
		for _, u := range urlItems(generic) {
			if strayComma(u) {
				return s, usagef("", "invalid value %q for $%s: %v", redact.URL(u), variable, errEmptyItem)
			}
			if _, err := scuttleURL(variable, u, true); err != nil {
				return s, err
			}
			s.quit = append(s.quit, u)
		}
	}
	return s, nil
}

// useURLs makes s the readiness and shutdown URLs where no flag gives them,
// and names $ENVOY_ADMIN_API as the owner of Envoy's and Istio's.
func (e *scuttleEnv) useURLs(s scuttleURLs) {
	c := e.c
	if !e.explicit("ready-url") && s.ready != nil {
		c.ReadyURLs, c.readyFrom = s.ready, "$ENVOY_ADMIN_API"
	}
	if !e.explicit("shutdown-url") && s.quit != nil {
		c.ShutdownURLs = s.quit
	}
	for _, u := range s.envoy {
		if slices.Contains(c.ReadyURLs, u) || slices.Contains(c.ShutdownURLs, u) {
			c.owner[u] = "$ENVOY_ADMIN_API"
		}
	}
}

// shutdown reads NEVER_KILL_ISTIO, NEVER_KILL_ISTIO_ON_FAILURE and
// START_WITHOUT_ENVOY. quits says whether there is a URL to POST.
func (e *scuttleEnv) shutdown(genericOnly, quits bool) {
	c := e.c
	never, onlyOK := e.boolean("NEVER_KILL_ISTIO", false), e.boolean("NEVER_KILL_ISTIO_ON_FAILURE", false)
	if !e.explicit("shutdown") {
		c.Shutdown = quits && (genericOnly || !never) && len(c.Command) > 0 // without a command: only wait
	}
	if !e.explicit("keep-proxy-on-failure") {
		c.KeepProxy = onlyOK && !genericOnly && c.Shutdown
	}
	if e.boolean("START_WITHOUT_ENVOY", false) {
		c.Disabled, c.disabledBy = true, "START_WITHOUT_ENVOY"
	}
}

// timeouts reads the wait's and the shutdown's timeouts. As scuttle's
// waitForEnvoy: QUIT_WITHOUT_ENVOY_TIMEOUT when more than 0 (its default 0
// means not set), else WAIT_FOR_ENVOY_TIMEOUT when more than 0, else no
// timeout.
func (e *scuttleEnv) timeouts() {
	c := e.c
	timeout, fatal := e.duration("QUIT_WITHOUT_ENVOY_TIMEOUT"), true
	if wait := e.duration("WAIT_FOR_ENVOY_TIMEOUT"); timeout == 0 && wait > 0 {
		timeout, fatal = wait, false
	}
	if timeout > 0 && !e.explicit("timeout") {
		c.Timeout = timeout
	}
	if timeout > 0 && !e.explicit("timeout-fatal") {
		c.TimeoutFatal = fatal
	}
	// scuttle bounds its quit requests by QUIT_REQUEST_TIMEOUT; here it
	// bounds the whole shutdown, retries included. With 0 scuttle gives up
	// before it sends anything; here the default stays.
	if d := e.duration("QUIT_REQUEST_TIMEOUT"); d > 0 && !e.explicit("shutdown-timeout") {
		c.ShutdownTimeout = d
	}
}

// scuttleURL checks a URL from one of scuttle's variables. Its error shows
// the URL as package redact does.
func scuttleURL(variable, raw string, loopback bool) (*url.URL, error) {
	if err := checkURL(raw, loopback); err != nil {
		return nil, usagef(hintFor(err, ""), "invalid value %q for $%s: %v", redact.URL(raw), variable, err)
	}
	return url.Parse(raw)
}

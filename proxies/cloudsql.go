// cloudsql.go: the Cloud SQL Auth Proxy, a container the manifest shows.

package proxies

// cloudsqlV1 is the image of the Cloud SQL proxy v1 (migration-guide.md),
// which has no --quitquitquit, and serves /startup on 8090 with
// -use_http_health_check, not on 9090.
const cloudsqlV1 = "cloudsql-docker/gce-proxy"

// The Cloud SQL Auth Proxy v2: GoogleCloudPlatform/cloud-sql-proxy at
// v2.25.3, cmd/root.go. It is a container of the manifest, never injected;
// its flags say what it serves.
var cloudsql = Proxy{
	Name:   "Cloud SQL Auth Proxy",
	Preset: "cloudsql",
	Ready: Endpoint{
		Port:     9090,                               // --http-port
		PortFlag: "http-port",                        //
		Path:     "/startup",                         // with --health-check
		Flag:     "health-check",                     //
		OK:       Answer{Status: 200, Body: "ok"},    // internal/healthcheck/healthcheck.go HandleStartup
		NotReady: Answer{Status: 503, Body: "error"}, //
	},
	Shutdown: Endpoint{
		Port:        9091,            // --admin-port
		PortFlag:    "admin-port",    //
		Path:        "/quitquitquit", // with --quitquitquit
		Flag:        "quitquitquit",  //
		OK:          Answer{Status: 200},
		Methods:     []string{"GET", "POST"}, // cmd/root.go quitquitquit, on localhost only
		WrongMethod: Answer{Status: 400},     //
	},

	// It is no mesh: a refused /startup is a flag missing more often than
	// a proxy missing.
	RefusedHint: "is cloud-sql-proxy in the pod, and started with --health-check " +
		"(without it, it serves no /startup on its --http-port, 9090 by default)?",
	MissingHint: "cloud-sql-proxy serves /quitquitquit only when started with --quitquitquit: add that flag to its arguments " +
		"(the endpoint is then on its --admin-port, 9091 by default)",

	Images: []string{"cloud-sql-connectors/cloud-sql-proxy"}, // README.md
	Retired: []Retired{{
		Image: cloudsqlV1,
		Why:   "version 1 of the Cloud SQL proxy (" + cloudsqlV1 + ") has no /startup on 9090 and no /quitquitquit: use v2, gcr.io/cloud-sql-connectors/cloud-sql-proxy, with --health-check --quitquitquit",
	}},
	Settings: Settings{
		EnvPrefix:  "CSQL_PROXY_", // the prefix of the variables that set cloud-sql-proxy's flags (cmd/root.go envPrefix, with - as _)
		ConfigFile: "config-file", // --config-file
	},

	// Dockerfile: ENTRYPOINT ["/cloud-sql-proxy"]; version 1's image runs
	// /cloud_sql_proxy (migration-guide.md).
	Processes: []string{"cloud-sql-proxy", "cloud_sql_proxy"},

	// cmd/root.go: --min-sigterm-delay, "the number of seconds to
	// accept new connections after receiving a TERM signal", default 0.
	Stop: Stop{Flag: "min-sigterm-delay"},

	// CHANGELOG.md, and the first tag whose cmd/root.go has each: the
	// quitquitquit endpoint came in 2.1.0 (#1624), --min-sigterm-delay in
	// 2.12.0 (#2266); --health-check is in every v2 release (#1271, in
	// v2.0.0-preview.0). An earlier release exits on an unknown flag.
	FlagsSince: []FlagSince{{"quitquitquit", Version{2, 1}}, {"min-sigterm-delay", Version{2, 12}}},
}

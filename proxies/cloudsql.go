// cloudsql.go: the Cloud SQL Auth Proxy v2, GoogleCloudPlatform/cloud-sql-proxy
// at v2.25.3, cmd/root.go. It is a container of the manifest, never
// injected; its flags say what it serves.

package proxies

var cloudsql = Proxy{
	Name:     "Cloud SQL Auth Proxy",
	Preset:   "cloudsql",
	Ready:    Endpoint{Port: 9090, Path: "/startup", Flag: "health-check", PortFlag: "http-port"},       // its wait subcommand polls /startup too
	Shutdown: Endpoint{Port: 9091, Path: "/quitquitquit", Flag: "quitquitquit", PortFlag: "admin-port"}, // GET or POST, localhost only

	// It is no mesh: a refused /startup is a flag missing more often than
	// a proxy missing.
	RefusedHint: "is cloud-sql-proxy in the pod, and started with --health-check " +
		"(without it, it serves no /startup on its --http-port, 9090 by default)?",
	MissingHint: "cloud-sql-proxy serves /quitquitquit only when started with --quitquitquit: add that flag to its arguments " +
		"(the endpoint is then on its --admin-port, 9091 by default)",

	Images: []string{"cloud-sql-connectors/cloud-sql-proxy"}, // README.md
	// Version 1 (migration-guide.md) has no --quitquitquit, and serves
	// /startup on 8090 with -use_http_health_check, not on 9090.
	Retired: []Retired{{
		Image: cloudsqlV1,
		Why:   "version 1 of the Cloud SQL proxy (" + cloudsqlV1 + ") has no /startup on 9090 and no /quitquitquit: use v2, gcr.io/cloud-sql-connectors/cloud-sql-proxy, with --health-check --quitquitquit",
	}},
	Settings: Settings{
		EnvPrefix:  "CSQL_PROXY_", // cmd/root.go envPrefix, with - as _
		ConfigFile: "config-file", // cmd/root.go --config-file
	},

	// cmd/root.go: --min-sigterm-delay, "the number of seconds to accept
	// new connections after receiving a TERM signal", default 0.
	Stop: Stop{Flag: "min-sigterm-delay"},
}

const cloudsqlV1 = "cloudsql-docker/gce-proxy"

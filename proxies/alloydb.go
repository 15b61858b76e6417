// alloydb.go: the AlloyDB Auth Proxy, a container the manifest shows.

package proxies

// The AlloyDB Auth Proxy: GoogleCloudPlatform/alloydb-auth-proxy at
// v1.15.2, cmd/root.go unless a line says otherwise. Like the Cloud SQL
// Auth Proxy, whose command line it shares, it is a container of the
// manifest, never injected, and its flags say what it serves.
var alloydb = Proxy{
	Name:   "AlloyDB Auth Proxy",
	Preset: "alloydb",
	Ready: Endpoint{
		Port:     9090,           // --http-port, default 9090
		PortFlag: "http-port",    //
		Path:     "/startup",     // with --health-check, beside /readiness and /liveness
		Flag:     "health-check", //
		// internal/healthcheck/healthcheck.go HandleStartup
		OK:       Answer{Status: 200, Body: "ok"},
		NotReady: Answer{Status: 503, Body: "error"},
	},
	Shutdown: Endpoint{
		Port:     9091,            // --admin-port, default 9091: the admin server, on localhost only
		PortFlag: "admin-port",    //
		Path:     "/quitquitquit", // with --quitquitquit
		Flag:     "quitquitquit",  //
		// quitquitquit: GET or POST, 400 to any other method
		OK:          Answer{Status: 200},
		Methods:     []string{"GET", "POST"},
		WrongMethod: Answer{Status: 400},
	},

	// It is no mesh: a refused /startup is a flag missing more often than
	// a proxy missing.
	RefusedHint: "is alloydb-auth-proxy in the pod, and started with --health-check " +
		"(without it, it serves no /startup on its --http-port, 9090 by default)?",
	MissingHint: "alloydb-auth-proxy serves /quitquitquit only when started with --quitquitquit: add that flag to its arguments " +
		"(the endpoint is then on its --admin-port, 9091 by default)",

	Images: []string{"alloydb-connectors/alloydb-auth-proxy"}, // README.md, Container image: gcr.io/alloydb-connectors/alloydb-auth-proxy
	Settings: Settings{
		EnvPrefix:  "ALLOYDB_PROXY_", // envPrefix, with - as _ (the viper key replacer)
		ConfigFile: "config-file",    // --config-file
	},

	// --min-sigterm-delay, "the number of seconds to accept new connections
	// after receiving a TERM signal", default 0.
	Stop:      Stop{Flag: "min-sigterm-delay"},
	Processes: []string{"alloydb-auth-proxy"}, // Dockerfile: ENTRYPOINT ["/alloydb-auth-proxy"]
	// Its shutdown command POSTs its own /quitquitquit on --admin-port
	// (runShutdownCmd; GoogleCloudPlatform/alloydb-auth-proxy#883).
	StoppedBy: []Command{{Program: "alloydb-auth-proxy", Words: []string{"shutdown"}}},

	// CHANGELOG.md, and the first tag whose cmd/root.go has each:
	// --health-check came in 0.5.0, the quitquitquit endpoint in 1.2.0
	// (#255), --min-sigterm-delay in 1.11.0 (#693). An earlier release
	// exits on an unknown flag.
	FlagsSince: []FlagSince{{"health-check", Version{0, 5}}, {"quitquitquit", Version{1, 2}}, {"min-sigterm-delay", Version{1, 11}}},
}

// Package config turns proxy-await's command line and environment into a
// validated *Config, or a *UsageError that names the flag or variable and
// the value at fault: it owns the flags and their PROXY_AWAIT_* variables,
// the value types (durations, ports, URL lists, signal rewrites, exit-code
// maps), --proxy's presets (each a proxy of package proxies), the
// variables of the programs proxy-await stands in for (linkerd-await's,
// and scuttle's when it runs as scuttle), the arguments of --check and
// --install, and the --help and --version text. What it ignores with a warning (a misspelt PROXY_AWAIT_ variable)
// is in Config.Warnings, for the caller to log.
//
// It neither logs nor exits: the root package prints the usage error and
// exits with its code, and --check judges a manifest's flags with the same
// parser.
package config

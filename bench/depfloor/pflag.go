//go:build !no_pflag

package main

import "github.com/spf13/pflag"

// pflag reads the command line, as config does.
func init() {
	parseFlags = func(args []string) (string, []string) {
		fs := pflag.NewFlagSet("depfloor", pflag.ContinueOnError)
		fs.SetInterspersed(false)
		port := fs.StringP("port", "p", "", "the proxy's port")
		fs.BoolP("quiet", "q", false, "log errors only")
		fs.String("proxy", "", "the preset")
		if err := fs.Parse(args); err != nil {
			return "", nil
		}
		return *port, fs.Args()
	}
}

package config

import (
	"testing"

	"github.com/proxy-await/proxy-await/internal/testutil"
)

// parseConfig runs once per start, before anything else.
func BenchmarkParseConfig(b *testing.B) {
	for _, bc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"minimal", []string{"--proxy", "none", "--", "/bin/true"}, nil},
		{"typical", []string{"--shutdown", "--timeout", "2m", "--rewrite", "TERM:USR1", "--term-delay", "20s",
			"--kill-after", "30s", "--", "/app/server", "--listen", ":8080"},
			map[string]string{"PROXY_AWAIT_PORT": "4191", "PROXY_AWAIT_LOG_FORMAT": "json"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			getenv := testutil.Getenv(bc.env)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse("proxy-await", bc.args, getenv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

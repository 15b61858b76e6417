package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/testutil"

	"github.com/proxy-await/proxy-await/internal/hint"
)

// A flag given without its value gets a hint with a value that this flag
// takes, and means: following the hint is not the next usage error, and a
// shutdown URL is not shown as a readiness path.
func TestMissingValueHintIsAValue(t *testing.T) {
	want := map[string]string{
		"proxy":            "linkerd",
		"port":             "4191",
		"ready-url":        "http://127.0.0.1:4191/ready",
		"shutdown-url":     "http://127.0.0.1:4191/shutdown",
		"backoff":          "30s",
		"probe-timeout":    "30s",
		"timeout":          "30s",
		"shutdown-timeout": "30s",
		"rewrite":          "TERM:USR1",
		"term-delay":       "30s",
		"drain-quiet":      "30s",
		"drain-ports":      "8080",
		"probe-port":       "8081",
		"app-probe":        "http://127.0.0.1:8080/healthz",
		"kill-after":       "30s",
		"wait-all":         "30s",
		"proxy-lost":       "30s",
		"exit-code-map":    "143:0",
		"install":          "/pa",
		"log-format":       "text",
	}
	// What each flag needs beside it to be accepted at all.
	context := map[string][]string{
		"port":        {"--proxy", "linkerd", "--", "true"},
		"drain-quiet": {"--term-delay", "1m", "--", "true"},
		"drain-ports": {"--drain-quiet", "1s", "--term-delay", "30s", "--", "true"},
		"probe-port":  {"--", "true"},
		"app-probe":   {"--probe-port", "8081", "--", "true"},
		"install":     {},
	}
	none := testutil.Getenv(nil)
	flagSet(&Config{}).VisitAll(func(f *pflag.Flag) {
		if f.NoOptDefVal != "" || f.Hidden {
			return // a boolean: no value needed; or proxy-awaitctl's
		}
		t.Run(f.Name, func(t *testing.T) {
			_, err := Parse("proxy-await", []string{"--" + f.Name}, none)
			var u *UsageError
			require.True(t, errors.As(err, &u), "%v", err)
			require.Equal(t, "--"+f.Name+" needs a value", u.Error())
			require.Contains(t, want, f.Name, "a flag this test does not know")
			assert.Equal(t, "write --"+f.Name+"="+want[f.Name], hint.Of(u))

			value, _ := strings.CutPrefix(hint.Of(u), "write --"+f.Name+"=")
			args, given := context[f.Name]
			if !given {
				args = []string{"--", "true"}
			}
			_, err = Parse("proxy-await", append([]string{"--" + f.Name + "=" + value}, args...), none)
			assert.NoError(t, err, "following the hint %q", hint.Of(u))
		})
	})
}

// The same holds for proxy-awaitctl's flags, in each command that has them.
func TestToolMissingValueHintIsAValue(t *testing.T) {
	want := map[string]string{
		"versions":            "linkerd=2.20",
		"image":               "ghcr.io/proxy-await/proxy-await:v1.2.3",
		"container":           "app",
		"log-format":          "text",
		"action":              "deny",
		"namespaces-excluded": "batch",
		"platform":            "linux/arm64",
		"entrypoints":         "entrypoints.yaml",
	}
	none := testutil.Getenv(nil)
	for _, sub := range subcommands {
		toolFlagSet(&sub, &Tool{}, &toolFlags{}).VisitAll(func(f *pflag.Flag) {
			if f.NoOptDefVal != "" {
				return
			}
			t.Run(sub.name+"/"+f.Name, func(t *testing.T) {
				_, err := ParseTool([]string{sub.name, "x", "--" + f.Name}, none)
				var u *UsageError
				require.True(t, errors.As(err, &u), "%v", err)
				require.Equal(t, "--"+f.Name+" needs a value", u.Error())
				require.Contains(t, want, f.Name, "a flag this test does not know")
				assert.Equal(t, "write --"+f.Name+"="+want[f.Name], hint.Of(u))
				value, _ := strings.CutPrefix(hint.Of(u), "write --"+f.Name+"=")
				args := []string{sub.name, "--" + f.Name + "=" + value}
				if sub.takesPaths {
					args = append(args, "x")
				}
				_, err = ParseTool(args, none)
				assert.NoError(t, err, "following the hint %q", hint.Of(u))
			})
		})
	}
}

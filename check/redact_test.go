package check

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A finding names the URL it is about as proxy-await's own logs do: with
// its password masked, in text and in JSON alike (both print Message), so
// that a CI log of --check holds no more of a secret than a pod's log.
func TestFindingsMaskPasswords(t *testing.T) {
	got := lines(t, "", filepath.Join("testdata", "passwords.yaml"))
	assert.Equal(t, []string{
		`testdata/passwords.yaml:16: error: preset-mismatch: Job/cloudsql-credentials container job: proxy-await waits for http://probe:xxxxx@127.0.0.1:9090/startup, which the Cloud SQL Auth Proxy sidecar never answers, so it would wait forever: the proxy serves /startup only when started with --health-check (add it to its args)`,
		`testdata/passwords.yaml:17: error: shutdown-disabled: Job/cloudsql-credentials container job: -S POSTs http://quit:xxxxx@127.0.0.1:9091/quitquitquit, which the Cloud SQL Auth Proxy sidecar does not serve, so it would keep running: the proxy serves /quitquitquit only when started with --quitquitquit (add it to its args)`,
		`testdata/passwords.yaml:40: error: shutdown-disabled: Job/consul-credentials container job: -S POSTs http://quit:xxxxx@127.0.0.1:20600/graceful_shutdown, but the Consul sidecar here takes it on port 20700 (consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-port: "20700"): set --shutdown-url http://127.0.0.1:20700/graceful_shutdown`,
		`testdata/passwords.yaml:54: error: flags: Pod/one-dash container app: unknown flag -shutdown-urls (hint: did you mean --shutdown-url?)`,
		`testdata/passwords.yaml:57: error: flags: Pod/one-dash container wrong-flag: unknown flag -x in -Sxhttp://quit:xxxxx@127.0.0.1:9091/quitquitquit (hint: see --help for the flags)`,
		`testdata/passwords.yaml:62: error: flags: Pod/one-dash container wrong-variable: invalid value "http://probe:xxxxx@127.0.0.1:9090/startup" for $PROXY_AWAIT_TIMEOUT (--timeout): not a duration (use 250ms, 1m30s, 2d or seconds)`,
	}, got)
	all := strings.Join(got, "\n")
	for _, secret := range []string{"s3cret", "pa,ss%40word", "pa,ss@word"} {
		plain, _ := url.PathUnescape(secret)
		assert.NotContains(t, all, secret)
		assert.NotContains(t, all, plain)
	}
}

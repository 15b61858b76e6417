package check

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A finding names the URL it is about as proxy-await's own logs do: with
// its password masked, in text and in JSON alike (both print Message), so
// that a CI log of --check holds no more of a secret than a pod's log.
func TestFindingsMaskPasswords(t *testing.T) {
	got := lines(t, "", filepath.Join("testdata", "passwords.yaml"))
	assert.Equal(t, []string{
		`testdata/passwords.yaml:15: warning: proxy-loss-hangs: Job/cloudsql-credentials container job: the classic Cloud SQL Auth Proxy sidecar (container cloud-sql-proxy) is not restarted if it dies while the application runs (restartPolicy: Never), and nothing ends the Job then: it hangs; add --proxy-lost 10s, so that proxy-await stops the application and exits 69, and the Job retries in a new pod; or set activeDeadlineSeconds`,
		`testdata/passwords.yaml:16: error: preset-mismatch: Job/cloudsql-credentials container job: proxy-await waits for http://probe:xxxxx@127.0.0.1:9090/startup, which the Cloud SQL Auth Proxy sidecar never answers, so it would wait forever: the proxy serves /startup only when started with --health-check (add it to its args)`,
		`testdata/passwords.yaml:17: error: shutdown-disabled: Job/cloudsql-credentials container job: -S POSTs http://quit:xxxxx@127.0.0.1:9091/quitquitquit, which the Cloud SQL Auth Proxy sidecar does not serve, so it would keep running: the proxy serves /quitquitquit only when started with --quitquitquit (add it to its args)`,
		`testdata/passwords.yaml:38: warning: proxy-loss-hangs: Job/consul-credentials container job: the classic Consul sidecar (consul.hashicorp.com/connect-inject: "true") is not restarted if it dies while the application runs (restartPolicy: Never), and nothing ends the Job then: it hangs; add --proxy-lost 10s, so that proxy-await stops the application and exits 69, and the Job retries in a new pod; or set activeDeadlineSeconds`,
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

// No finding of testdata/cases/secrets.txtar shows any of the secrets its
// manifests hold, each of which has "s3cret" in it: the golden file says
// what is shown instead; this says that nothing is shown of them.
func TestCasesHoldNoSecret(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "cases", "secrets.txtar"))
	require.NoError(t, err)
	dir := t.TempDir()
	var paths []string
	for _, f := range ar.Files {
		if isWant(f.Name) {
			continue
		}
		p := filepath.Join(dir, f.Name)
		require.NoError(t, os.WriteFile(p, f.Data, 0o644))
		paths = append(paths, p)
	}
	got := lines(t, "", paths...)
	require.NotEmpty(t, got)
	for _, l := range got {
		assert.NotContains(t, l, "s3cret")
	}
}

package urlport

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOf(t *testing.T) {
	for raw, want := range map[string]string{
		"http://127.0.0.1:15021/healthz/ready": "15021",
		"https://127.0.0.1:9901/ready":         "9901",
		"http://localhost/ready":               "80",
		"https://localhost/ready":              "443",
		"https://[::1]/quitquitquit":           "443",
		"http://[::1]:80/":                     "80",
		"https://localhost:80/":                "80",
		"http://localhost:/ready":              "80", // a colon and no port
		"http://user:pass@localhost/ready":     "80", // the password is not a port
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, want, Of(u), raw)
	}
}

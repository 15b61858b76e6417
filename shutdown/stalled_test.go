package shutdown

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 5xx whose body never comes is retried at once: the status decides, and
// waiting for the body would spend the whole budget on one answer.
func TestServerErrorWithAStalledBodyIsRetried(t *testing.T) {
	var posts atomic.Int64
	url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) > 1 {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the body never comes; the client hangs up
	}))
	err, log := post(t, opts(bound, url))
	require.NoError(t, err, "log:\n%s", log)
	assert.Equal(t, int64(2), posts.Load())
	assert.Contains(t, log, "proxy shutdown requested")
}

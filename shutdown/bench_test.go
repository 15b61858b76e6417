package shutdown

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/proxy-await/proxy-await/internal/logging"
)

// One shutdown POST answered 200 at once: the cost that -S adds to every
// exit.
func BenchmarkPost(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("shutdown\n"))
	}))
	defer srv.Close()
	opts := Options{Targets: Targets(srv.URL + "/shutdown"), Timeout: 5 * time.Second, Logger: logging.Discard()}
	b.ReportAllocs()
	for b.Loop() {
		if err := Post(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

package testutil

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The timing of the drain tests, which send requests while proxy-await
// holds the stop signal.
const (
	// DrainQuiet is long beside the tests' own steps, a request every
	// RequestGap: a test stalled for a second on a loaded machine still
	// sends its next request inside the quiet period.
	DrainQuiet = 1500 * time.Millisecond
	RequestGap = 100 * time.Millisecond
	// BusyFor is how long the requests go on once the watch is armed: long
	// enough that a watch blind to them would end the quiet period visibly
	// before the last request plus the quiet period.
	BusyFor = 500 * time.Millisecond
	// LateBound is how late after the quiet period's end the stop signal
	// may come on a loaded machine: a bound that only tells "after the
	// quiet period" from "at --term-delay", which is a minute in the tests
	// that use it, and that leaves the quiet period and it within the
	// tests' 20 s wait for a line. Under -race beside the full suite on two
	// busy cores the watch has been seen 5 s late; the benchmark measures
	// the real figure.
	LateBound = 15 * time.Second
)

// Requests sends GET url with client every gap until d has passed since the
// first (one round with d = 0), and returns when the last round was sent and
// when its answers had been read. Each round is a Round of parallel
// requests; every answer must be 200.
func Requests(t testing.TB, client *http.Client, url string, d, gap time.Duration, parallel int) (sent, answered time.Time) {
	t.Helper()
	end := time.Now().Add(d)
	for first := true; first || time.Now().Before(end); first = false {
		sent = time.Now()
		require.NoError(t, Round(client, url, parallel), "the server must keep serving while the stop signal is held")
		answered = time.Now()
		time.Sleep(gap)
	}
	return sent, answered
}

// Round sends parallel GET url with client at once (HTTP/2 multiplexes them
// on one connection), reads the answers, and returns the first error, or an
// answer that is not 200.
func Round(client *http.Client, url string, parallel int) error {
	var wg sync.WaitGroup
	errs := make(chan error, parallel)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(url)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %s", resp.Status)
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

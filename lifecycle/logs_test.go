package lifecycle_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// records parses proxy-await's stderr as JSON lines, one object each.
func records(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "not a JSON object: %q", line)
		for _, key := range []string{"time", "level", "msg", "event"} {
			require.Contains(t, rec, key, "line %q", line)
		}
		out = append(out, rec)
	}
	return out
}

func event(recs []map[string]any, name string) map[string]any {
	for _, r := range recs {
		if r["event"] == name {
			return r
		}
	}
	return nil
}

package editdistance

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"shutdwon", "shutdown", 2},
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"timout", "timeout", 1},
		{"dapr.io/enable", "dapr.io/enabled", 1},
		{"kitten", "sitting", 3},
	} {
		assert.Equal(t, tc.want, Of(tc.a, tc.b), "%q %q", tc.a, tc.b)
		assert.Equal(t, tc.want, Of(tc.b, tc.a), "%q %q", tc.b, tc.a)
	}
}

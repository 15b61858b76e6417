package hint

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	base := errors.New("unknown proxy")
	assert.Equal(t, "", Of(base))
	assert.Equal(t, "", Of(nil))
	err := fmt.Errorf("--proxy: %w", New(base, "choose linkerd"))
	assert.Equal(t, "choose linkerd", Of(err))
	assert.ErrorIs(t, err, base)
	assert.Equal(t, "--proxy: unknown proxy", err.Error())
}

func TestAttrs(t *testing.T) {
	attrs := []any{"event", "config_warning"}
	assert.Equal(t, attrs, Attrs(attrs, ""))
	assert.Equal(t, []any{"event", "config_warning", "hint", "drop it"}, Attrs(attrs, "drop it"))
}

package check

import (
	"strings"
	"testing"

	"github.com/proxy-await/proxy-await/ctl/rules"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// "-" reads stdin, named <stdin> in findings.
func TestStdin(t *testing.T) {
	pod := `kind: Pod
metadata: {name: listed}
spec:
  containers:
    - name: app
      image: registry.example.com/app:1
      command: [proxy-await, --proxy, none, --kill-after, never, --, /app]
`
	findings, sum := Paths([]string{"-"}, Options{Stdin: strings.NewReader(pod)})
	require.Len(t, findings, 1)
	assert.Equal(t, `<stdin>:7: error: flags: Pod/listed container app: invalid value "never" for --kill-after: not a duration (use 250ms, 1m30s, 2d or seconds)`, findings[0].String())
	assert.Equal(t, Summary{Files: 1, Pods: 1, Containers: 1}, sum)

	findings, _ = Paths([]string{"-"}, Options{})
	assert.Equal(t, []rules.Finding{{File: "<stdin>", Level: rules.Error, Rule: "input", Message: "no standard input to read"}}, findings, "a library caller without Stdin")
}

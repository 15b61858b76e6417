package docs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/proxy-await/proxy-await/config"
	"github.com/proxy-await/proxy-await/ctl/check"
	"github.com/proxy-await/proxy-await/internal/logging"
	"github.com/proxy-await/proxy-await/internal/manifesttest"
)

// yamlBlock is a fenced YAML block, indented (in a list item) or not.
var yamlBlock = regexp.MustCompile("(?ms)^([ ]*)```yaml\n(.*?)^[ ]*```[ ]*$")

// Every YAML snippet of the documentation is Kubernetes that works as
// written: a whole manifest, a pod template (a Job's spec.template) or a
// container, decoded strictly; every proxy-await command line in it is one
// proxy-await accepts; and a pod template that shuts a Linkerd proxy down
// turns the proxy's shutdown endpoint on.
func TestDocsSnippets(t *testing.T) {
	n := 0
	for _, page := range markdownPages(t) {
		text := readDoc(t, page)
		for i, m := range yamlBlock.FindAllStringSubmatchIndex(text, -1) {
			if strings.HasSuffix(text[:m[0]], checkExample+"\n") {
				continue // wrong on purpose: TestDocsCheckExample checks it
			}
			n++
			snippet := regexp.MustCompile("(?m)^"+text[m[2]:m[3]]).ReplaceAllString(text[m[4]:m[5]], "")
			t.Run(fmt.Sprintf("%s#%d", page, i+1), func(t *testing.T) { checkSnippet(t, snippet) })
		}
	}
	assert.NotZero(t, n, "no YAML snippets found")
}

func checkSnippet(t *testing.T, snippet string) {
	var tpls []*corev1.PodTemplateSpec
	j, err := yaml.YAMLToJSONStrict([]byte(snippet))
	require.NoError(t, err)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(j, &top))
	switch {
	case top["apiVersion"] != nil:
		objs, err := manifesttest.Decode([]byte(snippet))
		require.NoError(t, err)
		for _, obj := range objs {
			if tpl, ok := manifesttest.PodTemplate(obj); ok {
				tpls = append(tpls, tpl)
			}
		}
	case top["spec"] != nil || top["metadata"] != nil:
		tpl := new(corev1.PodTemplateSpec)
		require.NoError(t, manifesttest.StrictJSON(j, tpl), "as a pod template")
		tpls = append(tpls, tpl)
	default:
		c := new(corev1.Container)
		require.NoError(t, manifesttest.StrictJSON(j, c), "as a container")
		tpls = append(tpls, &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{*c}}})
	}
	runs := 0
	for _, tpl := range tpls {
		for _, r := range manifesttest.Runs(tpl, nil) {
			runs++
			manifesttest.CheckRun(t, tpl, r)
		}
	}
	assert.NotZero(t, runs, "the snippet runs no proxy-await")
}

// checkExample marks docs/check.md's manifest with a mistake, which
// TestDocsSnippets leaves to TestDocsCheckExample.
const checkExample = "<!-- check example: a manifest with a mistake on purpose; a test runs proxy-awaitctl check on it and compares the output -->"

// docs/check.md's finding is what proxy-awaitctl check prints for its manifest, with
// the exit code it shows.
func TestDocsCheckExample(t *testing.T) {
	page := readDoc(t, "docs/check.md")
	_, after, ok := strings.Cut(page, checkExample+"\n```yaml\n")
	require.True(t, ok, "docs/check.md has no check example")
	manifest, after, ok := strings.Cut(after, "```\n")
	require.True(t, ok)
	_, after, ok = strings.Cut(after, "```text\n")
	require.True(t, ok)
	session, _, ok := strings.Cut(after, "```\n")
	require.True(t, ok)
	lines := strings.Split(strings.TrimSuffix(session, "\n"), "\n")
	require.Len(t, lines, 4, "a command, its finding, echo $? and the code")
	args, ok := strings.CutPrefix(lines[0], "$ proxy-awaitctl ")
	require.True(t, ok, lines[0])
	require.Equal(t, "$ echo $?", lines[2])

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(manifest), 0o644))
	// As proxy-awaitctl runs check (ctl.Main), in the manifest's directory.
	t.Chdir(dir)
	cfg, err := config.ParseTool(strings.Fields(args), func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.NotNil(t, cfg.Check, lines[0])
	var stdout bytes.Buffer
	code := check.Main(cfg.Check, strings.NewReader(""), &stdout, logging.Discard())
	assert.Equal(t, lines[1]+"\n", stdout.String(), "the finding, and nothing after it")
	assert.Equal(t, lines[3], strconv.Itoa(code))
}

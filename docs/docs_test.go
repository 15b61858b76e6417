package docs_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/config"
)

// TestMain runs the tests from the repository's root, where the paths they
// name start.
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// docs/reference.md's usage block is the real --help, word for word.
func TestReferenceUsageIsHelp(t *testing.T) {
	page := readDoc(t, "docs/reference.md")
	_, after, ok := strings.Cut(page, "<!-- usage: this block is `proxy-await --help`; a test keeps them equal -->\n```text\n")
	require.True(t, ok, "docs/reference.md has no usage block")
	block, _, ok := strings.Cut(after, "```\n")
	require.True(t, ok)
	var help bytes.Buffer
	config.PrintHelp(&help)
	assert.Equal(t, help.String(), block, "update docs/reference.md's usage block from `proxy-await --help`")
}

// docs/reference.md's proxy-awaitctl blocks are its --help and each
// command's.
func TestReferenceToolUsageIsHelp(t *testing.T) {
	page := readDoc(t, "docs/reference.md")
	for _, name := range []string{"", "check", "inject", "policy"} {
		what := "proxy-awaitctl --help"
		if name != "" {
			what = "proxy-awaitctl help " + name
		}
		_, after, ok := strings.Cut(page, "<!-- usage: this block is `"+what+"`; a test keeps them equal -->\n```text\n")
		require.True(t, ok, "docs/reference.md has no block of %s", what)
		block, _, ok := strings.Cut(after, "```\n")
		require.True(t, ok)
		var help bytes.Buffer
		config.PrintToolHelp(&help, name)
		assert.Equal(t, help.String(), block, "update docs/reference.md's block from `%s`", what)
	}
}

// readDoc is the text of a documentation file, by its path from the root.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(data)
}

// Every event name the code logs is in docs/logging.md's Events table, so
// that a log pipeline's author finds each one there.
func TestLoggingListsEveryEvent(t *testing.T) {
	page := readDoc(t, "docs/logging.md")
	_, table, ok := strings.Cut(page, "\n## Events\n")
	require.True(t, ok, "docs/logging.md has no Events section")
	table, _, _ = strings.Cut(table, "\n## ")
	for _, name := range loggedEvents(t) {
		assert.True(t, strings.Contains(table, "`"+name+"`"), "docs/logging.md's Events table has no row for the event %s", name)
	}
}

// loggedEvents finds every `"event", "NAME"` attribute in proxy-await's own
// (non-test) Go files.
func loggedEvents(t *testing.T) []string {
	t.Helper()
	re := regexp.MustCompile(`"event", "([a-z_]+)"`)
	seen := map[string]bool{}
	for _, f := range productFiles(t) {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			seen[m[1]] = true
		}
	}
	require.NotEmpty(t, seen)
	return slices.Sorted(maps.Keys(seen))
}

// notProduct are the directories of the module whose Go files are not part
// of the proxy-await binary: test fixtures and helpers, the benchmarks, the
// release tooling and the kubelet scenarios (a module of their own).
var notProduct = map[string]bool{
	"testdata": true, "internal/testutil": true, "internal/testchild": true,
	"internal/fakeproxy": true, "internal/manifesttest": true, "internal/registrytest": true,
	"e2e": true, "bench": true, "scripts": true,
}

// productFiles is every non-test Go file of every package of the module but
// those under notProduct, found by walking the tree, so that a new package
// is read without being named here.
func productFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || notProduct[filepath.ToSlash(p)]) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// The walk finds the packages the binary is built from, and none of the
// directories it must leave out.
func TestProductFiles(t *testing.T) {
	dirs := map[string]bool{}
	for _, f := range productFiles(t) {
		dirs[filepath.ToSlash(filepath.Dir(f))] = true
	}
	for _, want := range []string{".", "lifecycle", "config", "readiness", "wrapper", "drain", "shutdown",
		"internal/answer", "internal/exitcode", "internal/logging", "internal/proctree"} {
		assert.True(t, dirs[want], "productFiles misses %s", want)
	}
	for dir := range dirs {
		for skip := range notProduct {
			assert.False(t, dir == skip || strings.HasPrefix(dir, skip+"/"), "productFiles reads %s", dir)
		}
		assert.NotContains(t, "/"+dir+"/", "/testdata/", "productFiles reads %s", dir)
	}
}

// Every relative link of every Markdown page resolves: the file or
// directory exists, and an #anchor names a heading of the page it points
// into, as GitHub makes them.
func TestDocsLinks(t *testing.T) {
	pages := markdownPages(t)
	require.Contains(t, pages, "README.md")
	links := 0
	for _, page := range pages {
		for _, target := range relativeLinks(readDoc(t, page)) {
			links++
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(dest); err != nil {
					assert.Fail(t, "a link to nowhere", "%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") {
				assert.True(t, slices.Contains(headingAnchors(readDoc(t, dest)), anchor),
					"%s links to %s, but %s has no heading #%s", page, target, dest, anchor)
			}
		}
	}
	assert.NotZero(t, links)
}

// markdownPages is every .md file of the repository outside hidden and
// testdata directories.
func markdownPages(t *testing.T) []string {
	t.Helper()
	var pages []string
	require.NoError(t, filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, filepath.ToSlash(p))
		}
		return nil
	}))
	return pages
}

var (
	fencedCode = regexp.MustCompile("(?ms)^[ ]*```.*?^[ ]*```[ ]*$")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	urlScheme  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	mdHeading  = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	notInSlug  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// relativeLinks are the targets of a page's links that are not URLs, code
// left out.
func relativeLinks(page string) []string {
	text := inlineCode.ReplaceAllString(fencedCode.ReplaceAllString(page, ""), "")
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		if !urlScheme.MatchString(m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// headingAnchors are the anchors GitHub gives a page's headings: the text
// without its markup, lower case, punctuation dropped, spaces turned into
// hyphens, and -1, -2... after repeats.
func headingAnchors(page string) []string {
	seen := map[string]int{}
	var out []string
	for _, m := range mdHeading.FindAllStringSubmatch(fencedCode.ReplaceAllString(page, ""), -1) {
		text := mdLink.ReplaceAllStringFunc(m[1], func(l string) string { return l[1:strings.Index(l, "]")] })
		slug := strings.ReplaceAll(notInSlug.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", slug, n))
		} else {
			out = append(out, slug)
		}
		seen[slug]++
	}
	return out
}

// unversioned is a claim about a proxy or Kubernetes that names no release:
// "recent Linkerd", "newer releases". Such claims go stale unseen when a
// release changes a default; name the release instead ("since Linkerd 2.16").
var unversioned = regexp.MustCompile(`(?i)\b(recent|newer|modern|current|latest|older)\s+(linkerd|istio|envoy|dapr|consul|kubernetes|cloud sql|k8s|releases?|versions?|proxies|proxy)\b`)

// The documentation and the examples name the release each claim holds for.
func TestDocsNameTheRelease(t *testing.T) {
	files := markdownPages(t)
	require.NoError(t, filepath.WalkDir("examples", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, filepath.ToSlash(p))
		}
		return err
	}))
	for _, f := range files {
		for i, line := range strings.Split(readDoc(t, f), "\n") {
			if m := unversioned.FindString(line); m != "" {
				t.Errorf("%s:%d: %q names no release: say which one the claim holds for", f, i+1, m)
			}
		}
	}
}

// The release archives hold the README and every file its links reach,
// page after page, so that a link followed in an unpacked archive finds its
// file: .goreleaser.yaml's archive files, globbed as goreleaser does ("**"
// is one directory or more), cover them all, and each pattern matches a
// file. `make release-check` checks the archives goreleaser writes.
func TestReleaseArchiveHoldsTheDocs(t *testing.T) {
	var cfg struct {
		Archives []struct {
			Files []string `yaml:"files"`
		} `yaml:"archives"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(readDoc(t, ".goreleaser.yaml")), &cfg))
	require.Len(t, cfg.Archives, 1)
	var all []string
	require.NoError(t, filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "." {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() {
			all = append(all, filepath.ToSlash(p))
		}
		return err
	}))
	// A pattern that matches a directory ships everything below it, as
	// goreleaser does.
	matches := func(pattern, f string) bool {
		p, segs := strings.Split(pattern, "/"), strings.Split(f, "/")
		for k := 1; k <= len(segs); k++ {
			if globMatch(p, segs[:k]) {
				return true
			}
		}
		return false
	}
	shipped := map[string]bool{}
	for _, pattern := range cfg.Archives[0].Files {
		n := 0
		for _, f := range all {
			if matches(pattern, f) {
				shipped[f] = true
				n++
			}
		}
		assert.NotZero(t, n, ".goreleaser.yaml: the archive file pattern %s matches nothing", pattern)
	}

	held := func(target string) bool {
		if shipped[target] {
			return true
		}
		for f := range shipped { // a directory: something in it
			if strings.HasPrefix(f, target+"/") {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for todo := []string{"README.md"}; len(todo) > 0; {
		page := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[page] {
			continue
		}
		seen[page] = true
		require.True(t, held(page))
		for _, link := range relativeLinks(readDoc(t, page)) {
			file, _, _ := strings.Cut(link, "#")
			if file == "" {
				continue
			}
			target := filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
			if !assert.True(t, held(target), "%s links to %s, which the release archives lack: add it to .goreleaser.yaml's archive files", page, link) {
				continue
			}
			if strings.HasSuffix(target, ".md") {
				todo = append(todo, target)
			}
		}
	}
}

// globMatch matches a path against a pattern, both split at "/": each
// element as path.Match does, and "**" for one or more elements.
func globMatch(pattern, name []string) bool {
	if len(pattern) == 0 {
		return len(name) == 0
	}
	if pattern[0] == "**" {
		for i := 1; i <= len(name); i++ {
			if globMatch(pattern[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, err := path.Match(pattern[0], name[0])
	return err == nil && ok && globMatch(pattern[1:], name[1:])
}

// A page that opens with a list of its sections lists every one: a section
// added later is not left out of it.
func TestDocsContentsListEverySection(t *testing.T) {
	section := regexp.MustCompile(`(?m)^## `)
	for _, page := range markdownPages(t) {
		text := readDoc(t, page)
		first := section.FindStringIndex(text)
		if first == nil {
			continue
		}
		contents := map[string]bool{}
		for _, link := range relativeLinks(text[:first[0]]) {
			if anchor, ok := strings.CutPrefix(link, "#"); ok {
				contents[anchor] = true
			}
		}
		if len(contents) == 0 {
			continue // no list of sections
		}
		body := fencedCode.ReplaceAllString(text[first[0]:], "")
		for _, m := range regexp.MustCompile(`(?m)^## +(.+?) *$`).FindAllStringSubmatch(body, -1) {
			anchor := headingAnchors("## " + m[1])[0]
			assert.True(t, contents[anchor], "%s: the list of sections at the top lacks %q (#%s)", page, m[1], anchor)
		}
	}
}

// cloudSQLProxyVersion matches a pinned Cloud SQL Auth Proxy version: an
// image tag, or the version named in prose.
var cloudSQLProxyVersion = regexp.MustCompile(`(?i)cloud-sql-proxy:v?(\d+\.\d+\.\d+)|cloud sql auth proxy v(\d+\.\d+\.\d+)|cloud-sql-proxy/v2@v(\d+\.\d+\.\d+)`)

// One Cloud SQL Auth Proxy version everywhere: the examples' images and the
// docs name the release that make test runs for real (the Makefile's
// CLOUD_SQL_PROXY_VERSION), so what the docs promise is what was tested.
func TestOneCloudSQLProxyVersion(t *testing.T) {
	makefile, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^CLOUD_SQL_PROXY_VERSION\s*:?=\s*v(\S+)$`).FindSubmatch(makefile)
	require.NotNil(t, m, "the Makefile sets no CLOUD_SQL_PROXY_VERSION")
	want := string(m[1])

	files := []string{"README.md"}
	for _, dir := range []string{"examples", "docs"} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		}))
	}
	found := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range cloudSQLProxyVersion.FindAllStringSubmatch(string(data), -1) {
			found++
			got := m[1] + m[2] + m[3]
			assert.Equal(t, want, got, "%s: %q pins another Cloud SQL Auth Proxy than the Makefile's v%s", f, m[0], want)
		}
	}
	assert.NotZero(t, found, "no file names a Cloud SQL Auth Proxy version")
}

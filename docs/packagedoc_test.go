package docs_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every package of this module says in its doc comment what it owns
// ("Package wrapper runs the application as a child ..."), or, for a
// program, what it is ("Command ociimage writes ..."): a reader who opens a
// directory learns its one job before its code.
func TestEveryPackageSaysWhatItOwns(t *testing.T) {
	docs := map[string]string{} // by directory: the package's doc comment
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() && path != ".":
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		if _, seen := docs[dir]; !seen {
			docs[dir] = ""
		}
		if f.Doc != nil {
			want := "Package " + f.Name.Name + " "
			if f.Name.Name == "main" {
				want = "Command "
			}
			if text := f.Doc.Text(); strings.HasPrefix(text, want) {
				docs[dir] = text
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, docs, "wrapper", "the walk found the packages")
	for dir, doc := range docs {
		assert.NotEmpty(t, doc, "package %s has no doc comment that starts \"Package NAME\" (\"Command NAME\" for a program)", dir)
	}
}

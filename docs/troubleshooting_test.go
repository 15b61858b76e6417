package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every warning and error proxy-await can print is in
// docs/troubleshooting.md, with what it means and what to do. The test finds
// them in the source: the messages of Warn and Error log calls, usage errors
// (usagef), configuration warnings (warnf), and the start errors of the
// command, and looks for the fixed text of each on the page.
func TestTroubleshootingListsEveryMessage(t *testing.T) {
	page := readDoc(t, "docs/troubleshooting.md")
	msgs := userMessages(t)
	require.NotEmpty(t, msgs)
	for _, m := range msgs {
		assert.True(t, strings.Contains(page, m.text), "docs/troubleshooting.md does not explain %q (%s)", m.text, m.where)
	}
}

type message struct{ text, where string }

// valueFiles are where the flag values' parsers are: their errors are the
// reasons of usage errors.
var valueFiles = map[string]bool{"values.go": true, "presets.go": true, "flags.go": true, "signals.go": true, "modes.go": true}

// verb splits a format string at its verbs.
var verb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// userMessages walks proxy-await's non-test Go files for what a user reads
// when something goes wrong, each as its longest fixed run of text.
func userMessages(t *testing.T) []message {
	t.Helper()
	var out []message
	fset := token.NewFileSet()
	for _, name := range productFiles(t) {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				var arg ast.Expr
				switch n := n.(type) {
				case *ast.CallExpr:
					switch callee(n) {
					case "Warn", "Error":
						if len(n.Args) > 0 {
							arg = n.Args[0]
						}
					case "usagef", "warnf":
						arg = n.Args[1]
					case "invalid": // c.invalid(flag, value, hint, reason)
						arg = n.Args[3]
					case "New", "Errorf": // a flag value's reason
						if valueFiles[filepath.Base(name)] {
							arg = n.Args[0]
						}
					}
				case *ast.KeyValueExpr: // StartError{Msg: ...}
					if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Msg" {
						arg = n.Value
					}
				case *ast.AssignStmt: // e.Msg = ...
					if sel, ok := n.Lhs[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "Msg" && len(n.Rhs) == 1 {
						arg = n.Rhs[0]
					}
				}
				for _, e := range values(arg, fn.Body) {
					if text := longest(fixedText(e)); len(text) >= 8 {
						out = append(out, message{text, fset.Position(e.Pos()).String()})
					}
				}
				return true
			})
		}
	}
	return out
}

func callee(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.SelectorExpr:
		return f.Sel.Name
	case *ast.Ident:
		return f.Name
	}
	return ""
}

// values is e, or, for a local variable, every value body assigns to it:
// each is a message of its own.
func values(e ast.Expr, body *ast.BlockStmt) []ast.Expr {
	id, ok := e.(*ast.Ident)
	if !ok {
		if e == nil {
			return nil
		}
		return []ast.Expr{e}
	}
	var out []ast.Expr
	ast.Inspect(body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == len(a.Rhs) {
			for i, l := range a.Lhs {
				if l, ok := l.(*ast.Ident); ok && l.Name == id.Name {
					out = append(out, a.Rhs[i])
				}
			}
		}
		return true
	})
	return out
}

// fixedText is the constant text an expression contributes to a message:
// string literals, both sides of a +, and the format of fmt.Sprintf.
func fixedText(e ast.Expr) []string {
	switch e := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil && e.Kind == token.STRING {
			return verb.Split(s, -1)
		}
	case *ast.BinaryExpr:
		return append(fixedText(e.X), fixedText(e.Y)...)
	case *ast.CallExpr:
		if name := callee(e); (name == "Sprintf" || name == "Errorf") && len(e.Args) > 0 {
			return fixedText(e.Args[0])
		}
	}
	return nil
}

func longest(parts []string) string {
	best := ""
	for _, p := range parts {
		p = strings.Trim(p, " :;,()\"'")
		if len(p) > len(best) {
			best = p
		}
	}
	return best
}

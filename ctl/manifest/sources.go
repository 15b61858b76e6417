// sources.go: the files to read, from the command line's paths, and
// reading each within what is left of the bound on the whole input.

package manifest

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// source is a file to read: a path, or stdin; or a path that cannot be
// read, and why.
type source struct {
	name  string // as findings name it
	path  string // "" for stdin
	chart bool   // a file of a Helm chart's templates directory
	own   bool   // a chart's own file beside its Chart.yaml (values.yaml), or Chart.yaml
	err   error
}

// stdinName is how findings name standard input.
const stdinName = "<stdin>"

// sources expands the command line's paths: a directory into its *.yaml,
// *.yml and *.json files (recursively, in lexical order, skipping hidden
// directories such as .git; a FIFO or device so named is a source with its
// error), "-" into stdin. A path named on the command line is read whatever
// it is: <(kubectl get ...) is a pipe. A path that cannot be read is
// a source with its error, in its place.
func sources(paths []string) []source {
	var out []source
	charts := map[string]bool{}
	for _, p := range paths {
		// A finding's file is read in its turn, by its order in out.
		bad := func(path string, err error) {
			out = append(out, source{name: path, err: err})
		}
		if p == "-" {
			out = append(out, source{name: stdinName})
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			bad(p, err)
			continue
		}
		if !st.IsDir() {
			out = append(out, source{name: p, path: p, chart: inChart(p, charts), own: chartsOwn(p)})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				bad(path, err)
				return nil
			case d.IsDir() && path != p && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case d.IsDir() || !manifestName(d.Name()):
			case !regular(path, d):
				// Opening a FIFO would wait for a writer for ever.
				bad(path, errors.New("not a regular file"))
			default:
				out = append(out, source{name: path, path: path, chart: inChart(path, charts), own: chartsOwn(path)})
			}
			return nil
		})
		if err != nil {
			bad(p, err)
		}
	}
	return out
}

// inChart says whether a file is in a Helm chart's templates directory
// (below a directory "templates" beside a Chart.yaml), where every file is
// a template to render, not a manifest. known caches the directories seen.
func inChart(file string, known map[string]bool) bool {
	for dir := filepath.Dir(file); ; {
		if filepath.Base(dir) == "templates" {
			chart, seen := known[dir]
			if !seen {
				_, err := os.Stat(filepath.Join(filepath.Dir(dir), "Chart.yaml"))
				chart = err == nil
				known[dir] = chart
			}
			if chart {
				return true
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return false
		}
		dir = up
	}
}

// chartsOwn says whether a file is a Helm chart's own, beside its
// Chart.yaml: no manifest, and not worth a warning that it was skipped,
// since the chart's templates get a finding that says to render them.
func chartsOwn(file string) bool {
	_, err := os.Stat(filepath.Join(filepath.Dir(file), "Chart.yaml"))
	return err == nil
}

// regular says whether a directory's entry is a file, itself or through a
// link, rather than a FIFO, a socket or a device.
func regular(path string, d fs.DirEntry) bool {
	if d.Type()&fs.ModeSymlink == 0 {
		return d.Type().IsRegular()
	}
	st, err := os.Stat(path)
	return err != nil || st.Mode().IsRegular() // a broken link is reported when it is opened
}

func manifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// reason is err without the file name that findings already show.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readAll reads a source, up to limit bytes: past that it is refused,
// having read limit+1 bytes of it.
func readAll(src source, stdin io.Reader, limit int, b Bounds) ([]byte, error) {
	if src.err != nil {
		return nil, src.err
	}
	r := stdin
	if r == nil && src.path == "" {
		return nil, errors.New("no standard input to read")
	}
	if src.path != "" {
		f, err := os.Open(src.path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > int64(limit) {
			return nil, b.errInput() // refused unread
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, b.errInput()
	}
	return data, nil
}

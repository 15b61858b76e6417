package inject

import (
	"bytes"
	"context"
)

// collected is a run of Paths with what it wrote kept, as the tests read
// it: the whole text, and each file's.
type collected struct {
	*Result
	Output  []byte
	Written []file
	Lines   []Line // each line said, in its turn
}

// file is a file's text as Paths wrote it.
type file struct {
	Name string
	Data []byte
}

// run is Paths writing to a buffer that the result keeps, as it keeps the
// lines said.
func run(ctx context.Context, paths []string, opt Options) *collected {
	var out bytes.Buffer
	var lines []Line
	opt.Out = &out
	opt.Say = func(l Line) { lines = append(lines, l) }
	r := Paths(ctx, paths, opt)
	c := &collected{Result: r, Output: out.Bytes(), Lines: lines}
	for _, w := range r.Written {
		c.Written = append(c.Written, file{w.Name, c.Output[w.Start:w.End:w.End]})
	}
	return c
}

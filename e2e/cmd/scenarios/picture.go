package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// picture draws rollouts as an SVG, one row a trace, on one time axis
// (seconds from `kubectl rollout restart`): the requests answered in each
// 100 ms, on new connections above the row's line and on the kept-alive
// pool below it; each failed request as a red cross at the moment it was
// sent; and each old pod as a bar from the moment the kubelet began to stop
// it (its deletion) to its app's exit, with a mark where the app got its
// stop signal and a tick, in its node's colour, where its last new
// connection was sent, from that node. Every figure comes from the traces.
func picture(w io.Writer, title string, rows []pictureRow) error {
	const (
		left, right, top = 360.0, 20.0, 88.0
		width            = 1200.0
		rowHeight        = 84.0
		bin              = 0.1 // seconds
	)
	from, to := -2.0, 0.0
	for _, r := range rows {
		to = math.Max(to, r.trace.End-r.trace.Restart)
	}
	to = math.Ceil(to + 1)
	x := func(t float64) float64 { return left + (t-from)/(to-from)*(width-left-right) }
	height := top + rowHeight*float64(len(rows)) + 40

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	var nodes []traceNode
	if len(rows) > 0 {
		nodes = rows[0].trace.Nodes
	}
	legend(&b, 10, 42, nodes)

	// The time axis: a grid line every 5 s.
	for i := int(math.Ceil(from / 5)); float64(5*i) <= to; i++ {
		t := float64(5 * i)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", x(t), top-6, x(t), height-34)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" fill="#555">%+.0f s</text>`+"\n", x(t), height-20, t)
	}

	for i, r := range rows {
		y := top + rowHeight*float64(i) + rowHeight/2 // the row's line
		t := r.trace
		lines := wrap(strings.ReplaceAll(r.label, "`", ""), int(left-20)/7)
		for j, l := range lines {
			fmt.Fprintf(&b, `<text x="10" y="%.0f" font-weight="bold">%s</text>`+"\n", y-8-14*float64(len(lines)-1-j), html.EscapeString(l))
		}
		fmt.Fprintf(&b, `<text x="10" y="%.0f" fill="#555" font-size="11">%s</text>`+"\n", y+8, html.EscapeString(r.figures))
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#999"/>`+"\n", left, y, width-right, y)

		// Answered requests, counted in bins: bars up (new connections)
		// and down (the pool), 3 px a request.
		counts := map[[2]int]int{}
		for _, q := range t.Requests {
			if q.Err != "" {
				continue
			}
			lane := 0
			if q.Pool {
				lane = 1
			}
			counts[[2]int{int(math.Floor((q.Start - t.Restart) / bin)), lane}]++
		}
		for k, n := range counts {
			t0 := float64(k[0]) * bin
			if t0 < from || t0 > to {
				continue
			}
			h := math.Min(3*float64(n), 18)
			y0, fill := y-h, "#7aa6d6"
			if k[1] == 1 {
				y0, fill = y, "#a9c98a"
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x(t0), y0, x(t0+bin)-x(t0), h, fill)
		}

		// The old pods: a bar from the kubelet's stop to the exit.
		last := t.lastConnections()
		lane := 0
		for _, p := range t.Pods {
			if !p.Old || p.Deleting == 0 {
				continue
			}
			by := y + 28 + 5*float64(lane%3)
			lane++
			end := p.Exit
			if end == 0 {
				end = p.Gone
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444" stroke-width="2"><title>%s: stop began %+.2f s, exited %+.2f s</title></line>`+"\n",
				x(p.Deleting-t.Restart), by, x(end-t.Restart), by, html.EscapeString(p.Name), p.Deleting-t.Restart, end-t.Restart)
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="#444"/>`+"\n", x(p.Deleting-t.Restart), by)
			if p.AppTERM != 0 {
				fmt.Fprintf(&b, `<path d="M%.1f %.1fl4 -5h-8z" fill="#e69f00"><title>%s: the app's stop signal %+.2f s</title></path>`+"\n",
					x(p.AppTERM-t.Restart), by, html.EscapeString(p.Name), p.AppTERM-t.Restart)
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="4" height="6" fill="#444"/>`+"\n", x(end-t.Restart)-2, by-3)
			if l, ok := last[p.Name]; ok && l.At-t.Restart >= from {
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"><title>%s: its last new connection %+.2f s, from %s (minSyncPeriod %s)</title></line>`+"\n",
					x(l.At-t.Restart), by-4, x(l.At-t.Restart), by+4, nodeColour(t, l.Node), html.EscapeString(p.Name), l.At-t.Restart, l.Node, t.minSync(l.Node))
			}
		}

		// Failed requests, on top.
		for _, q := range t.Requests {
			if q.Err == "" || q.Start-t.Restart < from {
				continue
			}
			cy := y - 10
			if q.Pool {
				cy = y + 10
			}
			cx := x(q.Start - t.Restart)
			fmt.Fprintf(&b, `<path d="M%.1f %.1fl8 8m0 -8l-8 8" stroke="#d00" stroke-width="2"><title>%+.2f s: %s</title></path>`+"\n",
				cx-4, cy-4, q.Start-t.Restart, html.EscapeString(q.Err))
		}
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// pictureRow is one row of the picture: a trace, its name, and its figures
// in a few words.
type pictureRow struct {
	label, figures string
	trace          *trace
}

// nodeColours are the nodes' colours, in the order of the trace's nodes.
var nodeColours = []string{"#0072b2", "#cc79a7"}

func nodeColour(t *trace, node string) string {
	for i, n := range t.Nodes {
		if n.Name == node && i < len(nodeColours) {
			return nodeColours[i]
		}
	}
	return "#888"
}

func legend(b *strings.Builder, x, y float64, nodes []traceNode) {
	items := []struct {
		mark  string
		width float64 // of the mark
		text  string
	}{
		{`<rect x="0" y="-9" width="10" height="10" fill="#7aa6d6"/>`, 10, "answered, new connections (up), per 100 ms"},
		{`<rect x="0" y="-9" width="10" height="10" fill="#a9c98a"/>`, 10, "answered, kept-alive pool (down)"},
		{`<path d="M0 -9l8 8m0 -8l-8 8" stroke="#d00" stroke-width="2"/>`, 10, "failed"},
		{`<circle cx="4" cy="-4" r="3" fill="#444"/><line x1="4" y1="-4" x2="30" y2="-4" stroke="#444" stroke-width="2"/><rect x="28" y="-7" width="4" height="6" fill="#444"/>`, 34, "old pod: its stop begins … it exits"},
		{`<path d="M4 0l4 -5h-8z" fill="#e69f00"/>`, 10, "the app gets its stop signal"},
	}
	for i, n := range nodes {
		if i < len(nodeColours) {
			items = append(items, struct {
				mark  string
				width float64
				text  string
			}{fmt.Sprintf(`<line x1="2" y1="-9" x2="2" y2="1" stroke="%s" stroke-width="2"/>`, nodeColours[i]), 4,
				fmt.Sprintf("its last new connection, from %s (minSyncPeriod %s)", n.Name, n.MinSyncPeriod)})
		}
	}
	x0 := x
	for i, it := range items {
		if i == 5 { // the nodes' marks on a line of their own
			x, y = x0, y+18
		}
		fmt.Fprintf(b, `<g transform="translate(%.0f %.0f)">%s<text x="%.0f" y="0">%s</text></g>`+"\n", x, y, it.mark, it.width+5, html.EscapeString(it.text))
		x += it.width + 25 + 6.2*float64(len(it.text))
	}
}

// wrap breaks a label into lines of at most n characters at its spaces, so
// that a long variant's name stays left of the chart (12 px bold sans-serif
// is some 7 px a character).
func wrap(label string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Split(label, " ") {
		if line != "" && len(line)+1+len(w) > n {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

package testutil

import "github.com/proxy-await/proxy-await/internal/proctree"

// Children lists the children of pid now, zombies included.
func Children(pid int) []proctree.Stat {
	var out []proctree.Stat
	for _, st := range proctree.Processes() {
		if st.PPID == pid {
			out = append(out, st)
		}
	}
	return out
}

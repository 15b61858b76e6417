package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// pod is a static pod as the scenarios need it: host network (there is no
// CNI), the busybox image, $RUN/bin at /opt/e2e and $RUN/out/NAME at /out.
type pod struct {
	Name       string
	Grace      int   // terminationGracePeriodSeconds
	Sidecars   []ctr // init containers with restartPolicy Always
	Containers []ctr
	run        string
}

type ctr struct {
	Name    string
	Command []string
	PreStop []string // an exec preStop hook
}

func (p pod) name() string { return p.Name }

func (p pod) MarshalJSON() ([]byte, error) {
	containers := func(cs []ctr, restartAlways bool) []any {
		var out []any
		for _, c := range cs {
			m := map[string]any{
				"name":            c.Name,
				"image":           "k8s.local/busybox:e2e",
				"imagePullPolicy": "Never",
				"command":         c.Command,
				"volumeMounts": []any{
					map[string]any{"name": "bin", "mountPath": "/opt/e2e", "readOnly": true},
					map[string]any{"name": "out", "mountPath": "/out"},
				},
			}
			if restartAlways {
				m["restartPolicy"] = "Always"
			}
			if c.PreStop != nil {
				m["lifecycle"] = map[string]any{"preStop": map[string]any{"exec": map[string]any{"command": c.PreStop}}}
			}
			out = append(out, m)
		}
		return out
	}
	grace := p.Grace
	if grace == 0 {
		grace = 30
	}
	spec := map[string]any{
		"hostNetwork":                   true,
		"restartPolicy":                 "Never",
		"terminationGracePeriodSeconds": grace,
		"containers":                    containers(p.Containers, false),
		"volumes": []any{
			map[string]any{"name": "bin", "hostPath": map[string]any{"path": filepath.Join(p.run, "bin"), "type": "Directory"}},
			map[string]any{"name": "out", "hostPath": map[string]any{"path": filepath.Join(p.run, "out", p.Name), "type": "Directory"}},
		},
	}
	if len(p.Sidecars) > 0 {
		spec["initContainers"] = containers(p.Sidecars, true)
	}
	return json.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": p.Name, "namespace": "default"},
		"spec":       spec,
	})
}

// sh runs script under busybox sh, with up() printing the shared clock.
func sh(script string) []string {
	return []string{"sh", "-c", `up() { read -r u _ </proc/uptime; echo "$u"; }; ` + script}
}

// proxyAwait runs proxy-await, mounted from the host, with args.
func proxyAwait(args ...string) []string {
	return append([]string{"/opt/e2e/proxy-await"}, args...)
}

// fakeproxy runs the stand-in proxy logging every request to /out/proxy.log.
func fakeproxy(args ...string) []string {
	return append([]string{"/opt/e2e/fakeproxy", "-log", "/out/proxy.log"}, args...)
}

// witness is a second container that records when the kubelet's SIGTERM
// reaches it (as PID 1 of its container, sh acts on a trapped TERM), so a
// scenario can tell the kubelet's TERM from the one proxy-await delivers.
var witness = ctr{Name: "witness", Command: sh(`trap 'echo TERM $(up) >>/out/witness; exit 0' TERM
echo started >>/out/witness
while :; do sleep 1 & wait $!; done`)}

// proxyLog is the stand-in proxy's request log, one entry a line.
type proxyEntry struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	Note   string `json:"note"`
}

func proxyLog(text string) []proxyEntry {
	var entries []proxyEntry
	dec := json.NewDecoder(strings.NewReader(text))
	for {
		var e proxyEntry
		if dec.Decode(&e) != nil {
			return entries
		}
		entries = append(entries, e)
	}
}

// count counts the entries for method and path, with status (0: any).
func count(entries []proxyEntry, method, path string, status int) int {
	n := 0
	for _, e := range entries {
		if e.Method == method && e.Path == path && (status == 0 || e.Status == status) {
			n++
		}
	}
	return n
}

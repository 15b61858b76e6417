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
	Inits      []ctr // init containers that run to completion, first
	Sidecars   []ctr // init containers with restartPolicy Always
	Containers []ctr
	EmptyDirs  []string // emptyDir volumes, by name
	run        string
}

type ctr struct {
	Name    string
	Image   string // "" for busybox
	Command []string
	Args    []string
	PreStop []string // an exec preStop hook
	User    int      // runAsUser, when not 0 (root)
	Mounts  []mount  // besides /opt/e2e and /out
}

// mount is a volume of the pod's at a path of the container.
type mount struct {
	Volume, Path string
	ReadOnly     bool
}

func (p pod) name() string { return p.Name }

func (p pod) MarshalJSON() ([]byte, error) {
	containers := func(cs []ctr, restartAlways bool) []any {
		var out []any
		for _, c := range cs {
			image := c.Image
			if image == "" {
				image = "k8s.local/busybox:e2e"
			}
			mounts := []any{
				map[string]any{"name": "bin", "mountPath": "/opt/e2e", "readOnly": true},
				map[string]any{"name": "out", "mountPath": "/out"},
			}
			for _, m := range c.Mounts {
				mounts = append(mounts, map[string]any{"name": m.Volume, "mountPath": m.Path, "readOnly": m.ReadOnly})
			}
			m := map[string]any{
				"name":            c.Name,
				"image":           image,
				"imagePullPolicy": "Never",
				"volumeMounts":    mounts,
			}
			if c.Command != nil {
				m["command"] = c.Command
			}
			if c.Args != nil {
				m["args"] = c.Args
			}
			if c.User != 0 {
				m["securityContext"] = map[string]any{"runAsUser": c.User, "runAsGroup": c.User}
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
	}
	volumes := []any{
		map[string]any{"name": "bin", "hostPath": map[string]any{"path": filepath.Join(p.run, "bin"), "type": "Directory"}},
		map[string]any{"name": "out", "hostPath": map[string]any{"path": filepath.Join(p.run, "out", p.Name), "type": "Directory"}},
	}
	for _, name := range p.EmptyDirs {
		volumes = append(volumes, map[string]any{"name": name, "emptyDir": map[string]any{}})
	}
	spec["volumes"] = volumes
	if inits := append(containers(p.Inits, false), containers(p.Sidecars, true)...); len(inits) > 0 {
		spec["initContainers"] = inits
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

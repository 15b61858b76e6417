package inject

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/config"
)

// strip is a manifest as it was before proxy-await was adopted in it: every
// container's command without proxy-await and its flags (the words after
// them, its own command, become the command), a shell script's statement
// without them, no PROXY_AWAIT_ variables, no init container that runs
// proxy-await (the install's or a wait) and no volume only such a container
// mounted, and each probe that pointed at --probe-port pointed back at
// --app-probe's check. entrypoint is the image's entrypoint where a
// container runs proxy-await without a command (a Dockerfile beside the
// manifest says so), nil when none does. JSON stays JSON; YAML is written
// again by the YAML library, its comments kept as it keeps them.
func strip(t *testing.T, data []byte, entrypoint []string) []byte {
	t.Helper()
	isJSON := bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err != nil {
			break
		}
		if len(n.Content) == 0 {
			continue
		}
		stripObject(n.Content[0], entrypoint)
		if isJSON {
			var v any
			require.NoError(t, n.Content[0].Decode(&v))
			b, err := json.MarshalIndent(v, "", "    ")
			require.NoError(t, err)
			out.Write(b)
			out.WriteByte('\n')
			continue
		}
		require.NoError(t, enc.Encode(&n))
	}
	require.NoError(t, enc.Close())
	return out.Bytes()
}

// stripObject strips every pod template of an object, or of a List's items.
func stripObject(o *yaml.Node, entrypoint []string) {
	for _, it := range listOf(value(o, "items")) {
		stripObject(it, entrypoint)
	}
	if k := value(o, "kind"); k != nil && k.Value == "Pod" {
		stripPod(o, entrypoint)
	}
	spec := value(o, "spec")
	for _, tpl := range []*yaml.Node{value(spec, "template"), value(value(value(spec, "jobTemplate"), "spec"), "template"), value(value(spec, "jobTargetRef"), "template")} {
		if tpl != nil {
			stripPod(tpl, entrypoint)
		}
	}
	for _, m := range listOf(value(spec, "metrics")) {
		if tpl := value(value(value(value(m, "provider"), "job"), "spec"), "template"); tpl != nil {
			stripPod(tpl, entrypoint)
		}
	}
}

func stripPod(tpl *yaml.Node, entrypoint []string) {
	spec := value(tpl, "spec")
	removed := map[string]bool{} // the volumes of the init containers removed
	if inits := value(spec, "initContainers"); inits != nil {
		var keep []*yaml.Node
		for _, c := range inits.Content {
			if argv := words(c, "command", "args"); len(argv) > 0 && isProxyAwait(argv[0]) || ownImage(c) {
				for _, m := range listOf(value(c, "volumeMounts")) {
					removed[value(m, "name").Value] = true
				}
				continue
			}
			keep = append(keep, c)
		}
		inits.Content = keep
		if len(keep) == 0 {
			deleteKey(spec, "initContainers")
		}
	}
	for _, c := range listOf(value(spec, "containers")) {
		stripContainer(c, entrypoint)
		if mounts := value(c, "volumeMounts"); mounts != nil {
			var keep []*yaml.Node
			for _, m := range mounts.Content {
				if !removed[value(m, "name").Value] {
					keep = append(keep, m)
				}
			}
			mounts.Content = keep
			if len(keep) == 0 {
				deleteKey(c, "volumeMounts")
			}
		}
	}
	if vols := value(spec, "volumes"); vols != nil && len(removed) > 0 {
		var keep []*yaml.Node
		for _, v := range vols.Content {
			if !removed[value(v, "name").Value] {
				keep = append(keep, v)
			}
		}
		vols.Content = keep
		if len(keep) == 0 {
			deleteKey(spec, "volumes")
		}
	}
}

// stripContainer takes proxy-await out of what a container runs.
func stripContainer(c *yaml.Node, entrypoint []string) {
	if env := value(c, "env"); env != nil {
		var keep []*yaml.Node
		for _, e := range env.Content {
			if !strings.HasPrefix(value(e, "name").Value, config.EnvPrefix) {
				keep = append(keep, e)
			}
		}
		env.Content = keep
		if len(keep) == 0 {
			deleteKey(c, "env")
		}
	}
	argv := words(c, "command", "args")
	if value(c, "command") == nil && len(entrypoint) > 0 && len(argv) > 0 && !isProxyAwait(argv[0]) {
		argv = append(append([]string(nil), entrypoint...), argv...)
	}
	// Behind a wrapper (tini --, env VAR=x), proxy-await is where it is.
	at := -1
	for i, w := range argv {
		if isProxyAwait(w) {
			at = i
			break
		}
		if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && !wrapper(w) {
			break
		}
	}
	if at >= 0 {
		rest, flags := command(argv[at+1:])
		setWords(c, append(argv[:at:at], rest...))
		unprobe(c, flags)
		return
	}
	// A statement of a shell script.
	for _, key := range []string{"command", "args"} {
		for _, w := range listOf(value(c, key)) {
			if strings.Contains(w.Value, "proxy-await") && strings.ContainsAny(w.Value, "\n;&| ") {
				w.Value = stripScript(w.Value)
			}
		}
	}
}

// command splits proxy-await's words into its flags, by name, and the
// command after them.
func command(args []string) ([]string, map[string]string) {
	info := map[string]config.FlagInfo{}
	for _, f := range config.Flags() {
		info["--"+f.Name] = f
		if f.Shorthand != "" {
			info["-"+f.Shorthand] = f
		}
	}
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args[i+1:], flags
		}
		if !strings.HasPrefix(a, "-") {
			return args[i:], flags
		}
		name, v, hasValue := strings.Cut(a, "=")
		f, ok := info[name]
		if !ok || f.Bool || hasValue {
			flags[strings.TrimLeft(name, "-")] = v
			continue
		}
		if i+1 < len(args) {
			flags[f.Name] = args[i+1]
			i++
		}
	}
	return nil, flags
}

// stripScript takes proxy-await and its flags out of each statement of a
// script that runs it: "exec proxy-await -S -- app" is "exec app".
func stripScript(s string) string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "proxy-await "); i >= 0 {
			if j := strings.Index(line[i:], " -- "); j >= 0 {
				line = line[:i] + line[i+j+len(" -- "):]
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// unprobe points each probe of --probe-port back at the check that
// --app-probe made.
func unprobe(c *yaml.Node, flags map[string]string) {
	port, app := flags["probe-port"], flags["app-probe"]
	if port == "" || app == "" {
		return
	}
	for _, kind := range []string{"readinessProbe", "livenessProbe", "startupProbe"} {
		pr := value(c, kind)
		h := value(pr, "httpGet")
		if h == nil || value(h, "port") == nil || value(h, "port").Value != port {
			continue
		}
		if p, ok := strings.CutPrefix(app, "tcp:"); ok {
			deleteKey(pr, "httpGet")
			pr.Content = append(pr.Content, strNode("tcpSocket"), mappingOf("port", intNode(p)))
			continue
		}
		u, err := url.Parse(app)
		if err != nil {
			continue
		}
		deleteKey(pr, "httpGet")
		get := mappingOf("path", strNode(u.Path), "port", intNode(u.Port()))
		if u.Scheme == "https" {
			get.Content = append(get.Content, strNode("scheme"), strNode("HTTPS"))
		}
		pr.Content = append(pr.Content, strNode("httpGet"), get)
	}
}

// words are the texts of the lists at keys of m, one after the other.
func words(m *yaml.Node, keys ...string) []string {
	var out []string
	for _, k := range keys {
		for _, w := range listOf(value(m, k)) {
			out = append(out, w.Value)
		}
	}
	return out
}

// setWords makes argv a container's command, and drops its args.
func setWords(c *yaml.Node, argv []string) {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, w := range argv {
		seq.Content = append(seq.Content, strNode(w))
	}
	if cmd := value(c, "command"); cmd != nil {
		cmd.Content = seq.Content
	} else {
		c.Content = append(c.Content, strNode("command"), seq)
	}
	deleteKey(c, "args")
}

func isProxyAwait(w string) bool { return path.Base(w) == "proxy-await" }

func ownImage(c *yaml.Node) bool {
	img := value(c, "image")
	return img != nil && strings.Contains(img.Value, "/proxy-await:")
}

func wrapper(w string) bool {
	switch path.Base(w) {
	case "tini", "dumb-init", "env":
		return true
	}
	return false
}

func listOf(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func deleteKey(m *yaml.Node, key string) {
	if i := index(m, key); i >= 0 {
		m.Content = append(m.Content[:2*i], m.Content[2*i+2:]...)
	}
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func intNode(s string) *yaml.Node {
	if _, err := strconv.Atoi(s); err != nil {
		return strNode(s)
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: s}
}

func mappingOf(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, strNode(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}

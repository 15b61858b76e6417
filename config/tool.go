// tool.go: proxy-awaitctl's command line. Its first word is the
// subcommand (check, inject, policy); then its flags and its paths in any
// order, up to "--". The flags the subcommands share (--versions,
// --log-format, -v, -q) mean the same in each.

package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/proxy-await/proxy-await/internal/hint"
	"github.com/proxy-await/proxy-await/internal/redact"
	"github.com/proxy-await/proxy-await/proxies"
)

// ToolName is the platform tool's name, as its messages start.
const ToolName = "proxy-awaitctl"

// Tool is what proxy-awaitctl's command line says: the subcommand, its own
// settings, and how to log.
type Tool struct {
	Command string  // check, inject or policy; "" for --help or --version alone
	Check   *Check  // nil unless Command is check
	Inject  *Inject // nil unless Command is inject
	Policy  *Policy // nil unless Command is policy

	Verbose   bool
	Quiet     bool
	LogFormat string
	Help      bool // print Command's help (the tool's with no Command), then exit
	Version   bool
	Warnings  []*hint.Error // what is ignored, to log at the start
}

// Check is what check reads: the manifests' paths, the cluster's
// releases, and how to print the findings.
type Check struct {
	Paths    []string                   // files and directories of manifests, - for stdin
	Versions map[string]proxies.Version // --versions: the cluster's releases, by name
	Native   map[string]bool            // --versions: native sidecars turned on (or off) for the whole mesh, by preset
	JSON     bool                       // --log-format json: one object per finding
}

// Inject is what inject reads: the manifests' paths, the cluster's
// releases, the image its init container runs, the containers to adopt,
// where the commands of images come from, and how to print what it did.
type Inject struct {
	Paths      []string                   // files and directories of manifests, - for stdin
	Versions   map[string]proxies.Version // --versions: the cluster's releases, by name
	Native     map[string]bool            // --versions: native sidecars turned on (or off) for the whole mesh, by preset
	Image      string                     // --image: the proxy-await-install init container's
	Containers []string                   // --container: the containers to adopt, by name; nil for every one
	// Platform picks an image of a multi-platform index (--platform,
	// OS/ARCH[/VARIANT]); "" is linux/amd64.
	Platform    string
	Entrypoints string // --entrypoints: images' ENTRYPOINT and CMD, asked before any registry; "" for none
	NoRegistry  bool   // --registry=false: no registry is asked
	Undo        bool   // --undo: take back what inject added
	JSON        bool   // --log-format json: one object per line said
}

// Policy is what policy reads: the cluster's releases and mesh-wide
// settings, what the API server does with what it refuses, and the
// namespaces it leaves alone.
type Policy struct {
	Versions map[string]proxies.Version
	Native   map[string]bool
	// Deny: --action deny, the API server refuses the object; else it
	// warns the client and writes the audit log.
	Deny bool
	// NamespacesExcluded are --namespaces-excluded: namespaces whose
	// objects are not judged, beside Kubernetes' own.
	NamespacesExcluded []string
}

// subcommand is one of proxy-awaitctl's commands: its name, what it does
// (for the help), its usage line, and its own flags beside the shared ones.
type subcommand struct {
	name, summary, usage string
	takesPaths           bool
	flags                func(fs *pflag.FlagSet, o *toolFlags)
}

// toolFlags are the subcommands' flags as the command line gives them.
type toolFlags struct {
	versions    map[string]proxies.Version
	native      map[string]bool
	image       string
	containers  []string
	action      string
	excluded    []string
	platform    string
	entrypoints string
	registry    bool
	undo        bool
}

var subcommands = []subcommand{
	{name: "check", takesPaths: true,
		summary: "report what in the manifests makes pods hang, drop requests or get killed",
		usage:   "proxy-awaitctl check [--versions NAME=V,...] PATH...",
		flags:   func(*pflag.FlagSet, *toolFlags) {}},
	{name: "inject", takesPaths: true,
		summary: "write the manifests with proxy-await adopted in every pod template",
		usage:   "proxy-awaitctl inject [--versions NAME=V,...] [--image IMAGE] [--container NAME] [--platform OS/ARCH] [--entrypoints FILE] [--registry=false] [--undo] PATH...",
		flags: func(fs *pflag.FlagSet, o *toolFlags) {
			fs.Var((*imageValue)(&o.image), "image", "the image of the proxy-await-install init container (default: this release's, "+ImageRepository+":vVERSION)")
			fs.Var(nameList{&o.containers}, "container", "adopt only the containers called `NAME`, repeatable (default: every one that is no proxy)")
			fs.Var((*platformValue)(&o.platform), "platform", "the platform whose image of a multi-platform index gives a container's command (default linux/amd64)")
			fs.Var((*fileValue)(&o.entrypoints), "entrypoints", "images' ENTRYPOINT and CMD in `FILE` (YAML or JSON: image: {entrypoint: [...], cmd: [...]}), asked before any registry")
			o.registry = true
			boolFlag(fs, &o.registry, "registry", "", "read the command of a container without one from its image's registry; =false asks none")
			boolFlag(fs, &o.undo, "undo", "", "take back what inject added, and write the manifests as they were before it")
		}},
	{name: "policy",
		summary: "write an admission policy that refuses what check finds in one object",
		usage:   "proxy-awaitctl policy [--versions NAME=V,...] [--action deny|warn] [--namespaces-excluded NS,...]",
		flags: func(fs *pflag.FlagSet, o *toolFlags) {
			o.action = actionWarn
			fs.Var((*actionValue)(&o.action), "action", "what the API server does with an object the policy refuses: warn (warn the client, write the audit log) or deny (refuse it)")
			fs.Var(namespaceList{&o.excluded}, "namespaces-excluded", "namespaces whose objects are not judged, comma-separated or repeated, beside kube-system, kube-public and kube-node-lease")
		}},
}

// lookupSubcommand is the subcommand called name, or nil.
func lookupSubcommand(name string) *subcommand {
	i := slices.IndexFunc(subcommands, func(s subcommand) bool { return s.name == name })
	if i < 0 {
		return nil
	}
	return &subcommands[i]
}

// toolFlagSet declares sub's flags, and those every subcommand shares, on
// a new FlagSet bound to t and o. Flags and paths mix: "proxy-awaitctl
// inject a.yaml --versions linkerd=2.19" reads --versions as a flag.
func toolFlagSet(sub *subcommand, t *Tool, o *toolFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet(ToolName+" "+sub.name, pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	o.versions, o.native = map[string]proxies.Version{}, map[string]bool{}
	fs.Var(versionList{o.versions, o.native}, "versions", "the cluster's releases, e.g. linkerd=2.20,istio=1.27,kubernetes=1.33; "+
		"+native or +classic after a proxy's release (istio=1.26+native), or alone (dapr=native): a setting of its whole mesh turns native sidecars on or off ("+
		strings.Join(proxies.MeshNames(), ", ")+")")
	sub.flags(fs, o)
	boolFlag(fs, &t.Verbose, "verbose", "v", "debug logging")
	boolFlag(fs, &t.Quiet, "quiet", "q", "log errors only")
	fs.StringVar(&t.LogFormat, "log-format", "text", "log format: text or json")
	boolFlag(fs, &t.Help, "help", "h", "print this help, then exit")
	return fs
}

// toolEnv are the variables proxy-awaitctl reads, by flag: how it logs, as
// proxy-await does. Nothing else of a pod's environment concerns it.
var toolEnv = []string{"log-format", "verbose", "quiet"}

// ParseTool reads proxy-awaitctl's args (without the program name) and the
// environment. A bad value is a *UsageError naming it.
func ParseTool(args []string, getenv func(string) (string, bool)) (*Tool, error) {
	getenv = trimmed(getenv)
	t := &Tool{LogFormat: "text"}
	fail := func(err error, cl *commandLine) (*Tool, error) {
		var u *UsageError
		if errors.As(err, &u) {
			if cl == nil {
				cl = &commandLine{logFormat: &t.LogFormat, fs: pflag.NewFlagSet("", pflag.ContinueOnError), args: args}
			}
			u.Format = cl.format(getenv)
		}
		return nil, err
	}
	if len(args) == 0 {
		return fail(usagef("run "+ToolName+" check PATH..., or "+ToolName+" --help",
			"no command: give one of %s", orList(subcommandNames())), nil)
	}
	switch first := args[0]; {
	case first == "-h" || first == "--help" || first == "help":
		if len(args) > 1 && first == "help" {
			if lookupSubcommand(args[1]) == nil {
				return fail(unknownSubcommand(args[1]), nil)
			}
			return &Tool{Command: args[1], Help: true}, nil
		}
		return &Tool{Help: true}, nil
	case first == "-V" || first == "--version" || first == "version":
		return &Tool{Version: true}, nil
	case lookupSubcommand(first) == nil:
		return fail(unknownSubcommand(first), nil)
	}
	sub := lookupSubcommand(args[0])
	t.Command = sub.name
	var o toolFlags
	fs := toolFlagSet(sub, t, &o)
	cl := &commandLine{given: map[string]given{}, logFormat: &t.LogFormat, fs: fs, args: args[1:]}
	if err := cl.fs.ParseAll(cl.args, cl.set); err != nil {
		return fail(cl.usage(err), cl)
	}
	if err := cl.boolTrapAnywhere(); err != nil {
		return fail(err, cl)
	}
	cl.parsed = true
	if cl.badValue != nil {
		return fail(flagError(cl.badValue), cl)
	}
	if t.Help {
		return t, nil
	}
	if err := toolFromEnv(fs, cl.given, getenv); err != nil {
		return fail(err, cl)
	}
	if t.LogFormat != "text" && t.LogFormat != "json" {
		return fail(usagef("", "invalid value %q for %s: choose text or json", cl.given["log-format"].value, flagOrVariable(cl.given["log-format"], "log-format")), cl)
	}
	paths := fs.Args()
	switch {
	case sub.takesPaths && len(paths) == 0:
		return fail(usagef("give files or directories of manifests, or - for stdin",
			"%s needs a PATH to read", sub.name), cl)
	case !sub.takesPaths && len(paths) > 0:
		return fail(usagef("drop "+shown(redact.Word(paths[0]))+" and what follows it",
			"%s reads no PATH: it writes the policy to stdout", sub.name), cl)
	}
	json := t.LogFormat == "json"
	switch sub.name {
	case "check":
		t.Check = &Check{Paths: paths, Versions: o.versions, Native: o.native, JSON: json}
	case "inject":
		t.Inject = &Inject{Paths: paths, Versions: o.versions, Native: o.native, Image: cmp.Or(o.image, ReleaseImage()),
			Containers: o.containers, Platform: o.platform, Entrypoints: o.entrypoints, NoRegistry: !o.registry,
			Undo: o.undo, JSON: json}
	case "policy":
		t.Policy = &Policy{Versions: o.versions, Native: o.native, Deny: o.action == actionDeny, NamespacesExcluded: o.excluded}
	}
	return t, nil
}

// ParseToolEnviron is ParseTool with the environment as os.Environ gives
// it. It also warns of each PROXY_AWAIT_ variable that neither proxy-await
// nor proxy-awaitctl reads and that is a near miss of one proxy-awaitctl
// reads: PROXY_AWAIT_LOG_FORMATT=json in CI would otherwise leave the log
// in text without a word. proxy-await's own variables, which a CI job may
// well set for other steps, are none of its business.
func ParseToolEnviron(args, environ []string) (*Tool, error) {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := vars[k]; !dup {
			vars[k] = v
		}
	}
	t, err := ParseTool(args, func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil || t.Help || t.Version {
		return t, err
	}
	for _, w := range unknownVariables(vars) {
		if near, ok := strings.CutPrefix(w.Hint, "did you mean $"+EnvPrefix); ok &&
			slices.Contains(toolEnv, strings.ToLower(strings.ReplaceAll(strings.TrimSuffix(near, "?"), "_", "-"))) {
			t.Warnings = append(t.Warnings, w)
		}
	}
	return t, nil
}

// toolFromEnv sets the flags of toolEnv not on the command line from their
// variables.
func toolFromEnv(fs *pflag.FlagSet, g map[string]given, getenv func(string) (string, bool)) error {
	for _, name := range toolEnv {
		f := fs.Lookup(name)
		env := envOf(name)
		v, ok := getenv(env)
		if f.Changed || !ok || v == "" {
			continue
		}
		if err := f.Value.Set(v); err != nil {
			return usagef(hintFor(err, name), "invalid value %q for $%s (--%s): %v", v, env, name, err)
		}
		g[name] = given{value: v, env: env}
	}
	return nil
}

// flagOrVariable names where a value came from: --flag, or $VAR (--flag).
func flagOrVariable(g given, flag string) string {
	if g.env != "" {
		return "$" + g.env + " (--" + flag + ")"
	}
	return "--" + flag
}

// unknownSubcommand is the error for the first word w when it is no
// subcommand: with the nearest one, or, for what looks like a path, the
// check of it.
func unknownSubcommand(w string) error {
	h := "run " + ToolName + " --help for the commands"
	switch near := closest(w, subcommandNames()); {
	case strings.HasPrefix(w, "-"):
		return usagef("put the command first: "+ToolName+" check|inject|policy [FLAGS] [PATH...]",
			"%s needs a command before its flags, not %s", ToolName, shown(redact.Word(w)))
	case near != "":
		h = "did you mean " + near + "?"
	case strings.ContainsAny(w, "/.") || w == "-":
		h = "to check the manifests at " + redact.Word(w) + ": " + ToolName + " check " + redact.Word(w)
	}
	return usagef(h, "unknown command %s: give one of %s", shown(redact.Word(w)), orList(subcommandNames()))
}

func subcommandNames() []string {
	var names []string
	for _, s := range subcommands {
		names = append(names, s.name)
	}
	return names
}

const toolHelpHead = `proxy-awaitctl is proxy-await's tool for platform teams: it reads the
Kubernetes manifests of pods that run, or should run, proxy-await. It runs on
laptops and in CI; proxy-await itself, the pod's entrypoint, reads no manifests.

usage: proxy-awaitctl COMMAND [FLAGS] [PATH...]
       proxy-awaitctl help COMMAND

commands:
`

const toolHelpTail = `
Flags may come before or after the paths; -- ends them. Each command also reads
$PROXY_AWAIT_LOG_FORMAT, $PROXY_AWAIT_VERBOSE and $PROXY_AWAIT_QUIET; the command
line wins.

exit codes:
  0        nothing to report: check found no error, inject adopted every container
           that needs proxy-await
  1        check found an error; inject left a container that needs proxy-await
           without it, or refused an input
  2        usage error
`

// PrintToolHelp prints the help of proxy-awaitctl's command name, or of
// proxy-awaitctl itself when name is "".
func PrintToolHelp(w io.Writer, name string) {
	sub := lookupSubcommand(name)
	if sub == nil {
		fmt.Fprint(w, toolHelpHead)
		for _, s := range subcommands {
			fmt.Fprintf(w, "  %-7s %s\n", s.name, s.summary)
		}
		fmt.Fprint(w, toolHelpTail)
		return
	}
	fmt.Fprintf(w, "%s: %s.\n\nusage: %s\n\nflags:\n", ToolName+" "+sub.name, sub.summary, sub.usage)
	fmt.Fprint(w, toolFlagSet(sub, &Tool{}, &toolFlags{}).FlagUsagesWrapped(helpWidth))
	fmt.Fprint(w, toolHelpTail)
}

// PrintToolVersion prints proxy-awaitctl's version, as PrintVersion does
// proxy-await's: both come from one build of one module.
func PrintToolVersion(w io.Writer) {
	var b strings.Builder
	PrintVersion(&b)
	fmt.Fprint(w, ToolName+strings.TrimPrefix(b.String(), "proxy-await"))
}

// versionList is the --versions flag: NAME=V items, comma-separated on the
// command line too; the names are those whose releases the proxy table
// knows to differ (proxies.ReleaseNames). A proxy whose native sidecars a
// setting of the whole mesh turns on or off (proxies.MeshNames) also takes
// +native or +classic after its release, or native or classic alone.
type versionList struct {
	releases map[string]proxies.Version
	native   map[string]bool
}

// Mesh-wide settings, as --versions writes them.
const (
	meshNative  = "native"
	meshClassic = "classic"
)

func (l versionList) Type() string    { return "NAME=V[,...]" }
func (l versionList) example() string { return "linkerd=2.20" }
func (l versionList) String() string {
	var items []string
	for name, v := range l.releases {
		items = append(items, name+"="+v.String())
	}
	for name, on := range l.native {
		setting := map[bool]string{true: meshNative, false: meshClassic}[on]
		if i := slices.IndexFunc(items, func(it string) bool { return strings.HasPrefix(it, name+"=") }); i >= 0 {
			items[i] += "+" + setting
		} else {
			items = append(items, name+"="+setting)
		}
	}
	slices.Sort(items)
	return strings.Join(items, ",")
}
func (l versionList) Set(s string) error        { return addItems(l, s, l.splitsOnCommandLine()) }
func (l versionList) splitsOnCommandLine() bool { return true }
func (l versionList) add(item string) error {
	name, v, ok := strings.Cut(item, "=")
	if !ok {
		return hint.New(fmt.Errorf("want NAME=VERSION, as in linkerd=2.20, not %s", shown(item)),
			"write FLAG linkerd=2.20,istio=1.27,kubernetes=1.33")
	}
	name = strings.ToLower(strings.TrimSpace(name))
	releases, meshes := proxies.ReleaseNames(), proxies.MeshNames()
	if !slices.Contains(releases, name) && !slices.Contains(meshes, name) {
		var names []string
		for _, n := range append(slices.Clone(releases), meshes...) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		return hint.New(fmt.Errorf("unknown name %s", shown(name)), "name one of "+strings.Join(names, ", "))
	}
	v = strings.TrimSpace(v)
	rel, setting, withSetting := strings.Cut(v, "+")
	if v == meshNative || v == meshClassic {
		rel, setting, withSetting = "", v, true
	}
	if withSetting {
		if !slices.Contains(meshes, name) {
			return hint.New(fmt.Errorf("%s has no setting of the whole mesh that --versions states, not +%s", name, setting),
				"only "+strings.Join(meshes, ", ")+" take +native or +classic")
		}
		if setting != meshNative && setting != meshClassic {
			return hint.New(fmt.Errorf("unknown setting %s for %s", shown(setting), name),
				fmt.Sprintf("write %s=V+native or %[1]s=V+classic, or %[1]s=native alone", name))
		}
		l.native[name] = setting == meshNative
	}
	if rel == "" {
		return nil
	}
	if !slices.Contains(releases, name) {
		return hint.New(fmt.Errorf("the release of %s makes no difference to what proxy-awaitctl judges", name),
			fmt.Sprintf("write %s=native or %[1]s=classic, for the setting of its whole mesh", name))
	}
	ver, err := parseVersion(rel)
	if err != nil {
		return err
	}
	l.releases[name] = ver
	return nil
}

// parseVersion reads MAJOR.MINOR, with an optional leading v and an
// optional .PATCH that makes no difference to --check.
func parseVersion(s string) (proxies.Version, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return proxies.Version{}, fmt.Errorf("version %s is not MAJOR.MINOR, as in 2.20", shown(s))
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || !isDigits(p) {
			return proxies.Version{}, fmt.Errorf("version %s is not MAJOR.MINOR, as in 2.20", shown(s))
		}
		n[i] = v
	}
	return proxies.Version{Major: n[0], Minor: n[1]}, nil
}

// imageValue is an image reference: not empty, no white space.
type imageValue string

func (v *imageValue) String() string  { return string(*v) }
func (v *imageValue) Type() string    { return "IMAGE" }
func (v *imageValue) example() string { return ImageRepository + ":v1.2.3" }
func (v *imageValue) Set(s string) error {
	if s == "" || strings.ContainsAny(s, " \t\n") {
		return fmt.Errorf("not an image reference, as in %s", v.example())
	}
	*v = imageValue(s)
	return nil
}

// The actions of --action.
const (
	actionWarn = "warn"
	actionDeny = "deny"
)

// actionValue is --action: warn or deny.
type actionValue string

func (v *actionValue) String() string  { return string(*v) }
func (v *actionValue) Type() string    { return "deny|warn" }
func (v *actionValue) example() string { return actionDeny }
func (v *actionValue) Set(s string) error {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case actionWarn, actionDeny:
		*v = actionValue(s)
		return nil
	}
	return fmt.Errorf("choose deny or warn")
}

// namespaceList is --namespaces-excluded: namespaces' names, comma lists
// or one a use.
type namespaceList struct{ names *[]string }

func (l namespaceList) String() string            { return strings.Join(*l.names, ",") }
func (l namespaceList) Type() string              { return "NS,..." }
func (l namespaceList) example() string           { return "batch" }
func (l namespaceList) Set(s string) error        { return addItems(l, s, l.splitsOnCommandLine()) }
func (l namespaceList) splitsOnCommandLine() bool { return true }
func (l namespaceList) add(item string) error {
	if !dnsLabel(item) {
		return fmt.Errorf("%s is not a namespace's name (lower case letters, digits and -, at most 63)", shown(item))
	}
	if !slices.Contains(*l.names, item) {
		*l.names = append(*l.names, item)
	}
	return nil
}

// dnsLabel says whether s is a namespace's name, an RFC 1123 label: at
// most 63 lower case letters, digits and -, a letter or digit first and
// last.
func dnsLabel(s string) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	if s == "" || len(s) > 63 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := range len(s) {
		if !alnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// nameList is --container: a container's name a use, repeatable.
type nameList struct{ names *[]string }

func (l nameList) String() string  { return strings.Join(*l.names, ",") }
func (l nameList) Type() string    { return "NAME" }
func (l nameList) example() string { return "app" }
func (l nameList) Set(s string) error {
	if s == "" || strings.ContainsAny(s, " \t\n,") {
		return fmt.Errorf("not a container's name")
	}
	*l.names = append(*l.names, s)
	return nil
}

// platformValue is --platform: OS/ARCH or OS/ARCH/VARIANT, as an image
// index names its platforms.
type platformValue string

func (v *platformValue) String() string  { return string(*v) }
func (v *platformValue) Type() string    { return "OS/ARCH" }
func (v *platformValue) example() string { return "linux/arm64" }
func (v *platformValue) Set(s string) error {
	parts := strings.Split(s, "/")
	ok := len(parts) == 2 || len(parts) == 3
	for _, p := range parts {
		ok = ok && p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == ""
	}
	if !ok {
		return hint.New(fmt.Errorf("not OS/ARCH or OS/ARCH/VARIANT"), "write FLAG linux/amd64, linux/arm64 or linux/arm/v7")
	}
	*v = platformValue(s)
	return nil
}

// fileValue is a file's path: not empty.
type fileValue string

func (v *fileValue) String() string  { return string(*v) }
func (v *fileValue) Type() string    { return "FILE" }
func (v *fileValue) example() string { return "entrypoints.yaml" }
func (v *fileValue) Set(s string) error {
	if s == "" {
		return fmt.Errorf("no file named")
	}
	*v = fileValue(s)
	return nil
}

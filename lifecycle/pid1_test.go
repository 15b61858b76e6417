package lifecycle_test

// Init-grade supervision, for real: proxy-await as PID 1 of a fresh PID
// namespace (under unshare), job control as a plain process, and proxy-await
// as the entrypoint of an OCI container run by runc.

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/proctree"
	"github.com/proxy-await/proxy-await/internal/testutil"
)

// startAsPID1 runs proxy-await with args as PID 1 of a new PID namespace,
// with a /proc of its own. --kill-child ties the namespace's life to
// unshare's, so a failed test leaves nothing behind.
func startAsPID1(t *testing.T, args ...string) *proc {
	t.Helper()
	require.Zero(t, os.Geteuid(), "this test creates a PID namespace and needs root: run it as root")
	unshare, err := exec.LookPath("unshare")
	require.NoError(t, err, "unshare is missing: install util-linux (apt-get install util-linux)")
	cmd := exec.Command(unshare, append([]string{"--pid", "--fork", "--mount-proc", "--kill-child", proxyAwaitBin}, args...)...)
	// A process group of our own that is not orphaned, as a shell's job.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return startCmd(t, cmd, nil)
}

// pid1 returns the host PID of the proxy-await that p runs as PID 1 of its
// namespace: unshare's only child. Call it once the command has said
// something, so that unshare's child has become proxy-await.
func pid1(t *testing.T, p *proc) int {
	t.Helper()
	var kids []string
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p.cmd.Process.Pid))
	require.NoError(t, err)
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		kids = append(kids, strings.Fields(string(data))...)
	}
	require.Len(t, kids, 1, "unshare (PID %d) should have exactly one child", p.cmd.Process.Pid)
	pid, err := strconv.Atoi(kids[0])
	require.NoError(t, err)
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	require.NoError(t, err)
	require.Equal(t, proxyAwaitBin, exe, "unshare's child should be proxy-await")
	require.Equal(t, 1, nsPID(t, pid), "proxy-await should be PID 1 in its namespace")
	return pid
}

// nsPID is pid's number in its innermost PID namespace (the last NSpid).
func nsPID(t *testing.T, pid int) int {
	t.Helper()
	st, ok := proctree.ReadStatus(pid)
	require.True(t, ok, "process %d is gone", pid)
	require.NotEmpty(t, st.NSpid, "no NSpid line in /proc/%d/status", pid)
	return st.NSpid[len(st.NSpid)-1]
}

// descendants lists root and every process below it. In a PID namespace
// whose init is root, that is every process of the namespace, zombies
// included: orphans are reparented to root.
func descendants(t *testing.T, root int) []proctree.Stat {
	t.Helper()
	kids := map[int][]proctree.Stat{}
	var top proctree.Stat
	for _, st := range proctree.Processes() {
		if st.PID == root {
			top = st
		} else {
			kids[st.PPID] = append(kids[st.PPID], st)
		}
	}
	require.NotZero(t, top.PID, "process %d is gone", root)
	out := []proctree.Stat{top}
	for i := 0; i < len(out); i++ {
		out = append(out, kids[out[i].PID]...)
	}
	return out
}

// waitState polls /proc until process pid is in state want.
func waitState(t *testing.T, pid int, want byte, what string) {
	t.Helper()
	var state byte
	if !testutil.Until(waitLimit, func() bool {
		st, ok := proctree.ReadStat(pid)
		require.True(t, ok, "%s (PID %d) is gone while waiting for state %c", what, pid, want)
		state = st.State
		return state == want
	}) {
		t.Fatalf("%s (PID %d) is in state %c, not %c, after %s", what, pid, state, want, waitLimit)
	}
}

func TestPID1ForwardsSigterm(t *testing.T) {
	t.Run("the child handles it: its own status", func(t *testing.T) {
		p := startAsPID1(t, append([]string{"--proxy", "none"}, child("term-exit", "7")...)...)
		p.expect("ready")
		require.NoError(t, syscall.Kill(pid1(t, p), syscall.SIGTERM))
		p.expect("signal SIGTERM")
		assert.Equal(t, 7, p.wait())
	})
	t.Run("the child dies of it: 143", func(t *testing.T) {
		p := startAsPID1(t, append([]string{"--proxy", "none"}, child("idle")...)...)
		p.expect("ready")
		require.NoError(t, syscall.Kill(pid1(t, p), syscall.SIGTERM))
		assert.Equal(t, 143, p.wait())
	})
}

func TestPID1ReapsOrphans(t *testing.T) {
	p := startAsPID1(t, append([]string{"--proxy", "none", "-v"}, child("orphan")...)...)
	orphan, err := strconv.Atoi(strings.TrimPrefix(p.expect("orphan "), "orphan "))
	require.NoError(t, err)
	p.expect("ready")
	pa := pid1(t, p)

	// Find the grandchild from the host, and check that the kernel gave it
	// to proxy-await when its parent exited.
	var gc proctree.Stat
	for _, st := range descendants(t, pa) {
		if st.PID != pa && nsPID(t, st.PID) == orphan {
			gc = st
		}
	}
	require.NotZero(t, gc.PID, "orphan %d (namespace PID) not found under proxy-await", orphan)
	require.Equal(t, pa, gc.PPID, "the orphan should have been reparented to PID 1")

	// It exits at EOF on stdin; the child itself keeps running.
	require.NoError(t, p.stdin.Close())
	p.waitLog(fmt.Sprintf("reaped orphan pid=%d ", orphan))
	st, ok := proctree.ReadStat(gc.PID)
	require.False(t, ok, "orphan (host PID %d) still there in state %c once reaped", gc.PID, st.State)
	tree := descendants(t, pa)
	assert.Len(t, tree, 2, "proxy-await and its child should be all that is left: %+v", tree)
	for _, st := range tree {
		assert.NotEqual(t, byte('Z'), st.State, "zombie in the namespace: %+v", st)
	}

	require.NoError(t, syscall.Kill(pa, syscall.SIGTERM))
	p.expect("signal SIGTERM")
	assert.Equal(t, 0, p.wait())
	assert.Equal(t, 1, strings.Count(p.stderr.String(), "reaped orphan"), "one orphan, one reap")
}

func TestPID1ExitCodes(t *testing.T) {
	for _, tc := range exitCodeCases {
		t.Run(tc.name, func(t *testing.T) {
			p := startAsPID1(t, append([]string{"--proxy", "none"}, tc.args...)...)
			assert.Equal(t, tc.want, p.wait())
		})
	}
}

// Without job control nothing would resume a stopped proxy-await: when its
// child stops, it keeps running, so that the stop signal, --kill-after and
// -S still work (tini and dumb-init never stop without a terminal either).
// Job control means a controlling terminal whose foreground group is
// proxy-await's; TestCtrlZStopsTheJob has that case. Under setsid without
// -g the child cannot stop at all: its process group is orphaned, and the
// kernel discards its SIGTSTP.
func TestStoppedChildDoesNotStopProxyAwait(t *testing.T) {
	tini, err := exec.LookPath("tini")
	require.NoError(t, err, "tini is needed: make deps installs it (apt-get install tini)")
	for _, tc := range []struct {
		name  string
		front []string // what runs proxy-await
		args  []string
	}{
		{"setsid, -g", []string{"setsid"}, []string{"-g"}},
		{"tini -s", []string{tini, "-s", "--"}, nil},
		{"tini -s, -g", []string{tini, "-s", "--"}, []string{"-g"}},
		{"a background job", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := testutil.StartFakeProxy(t, "-stay-up") // stays up to count a second POST
			args := append(append(tc.front, proxyAwaitBin, "-v", "-S", "--kill-after", "200ms",
				"--ready-url", fp.URL("/ready"), "--shutdown-url", fp.URL("/shutdown")), tc.args...)
			args = append(args, "--", "sh", "-c", "echo ready; kill -TSTP $$; echo resumed")
			cmd := exec.Command(args[0], args[1:]...)
			if tc.front == nil {
				// A process group of its own that is not orphaned, as a
				// shell's background job. setsid and tini make their own
				// (setsid only when it is not a group leader already; else
				// it forks, and exits at once).
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			}
			p := startCmd(t, cmd, nil)
			p.expect("ready")
			var pa, sh int
			for _, st := range descendants(t, cmd.Process.Pid) {
				switch st.Comm {
				case "proxy-await":
					pa = st.PID
				case "sh":
					sh = st.PID
				}
			}
			require.NotZero(t, pa, "proxy-await not found")
			require.NotZero(t, sh, "the child not found")
			waitState(t, sh, 'T', "the child")
			p.waitLog("child stopped: not stopping too, as no job control would resume proxy-await")

			// The stop signal reaches a stopped child only once it runs again:
			// --kill-after ends it, and the proxy is shut down.
			require.NoError(t, syscall.Kill(pa, syscall.SIGTERM))
			assert.Equal(t, 137, p.wait())
			assert.Empty(t, p.restLines, "the child never ran again")
			assert.Contains(t, p.stderr.String(), "sending SIGKILL")
			assert.Equal(t, 1, fp.Count("POST", "/shutdown"))
		})
	}
}

// --rewrite TSTP:0 drops SIGTSTP: the child does not stop, so neither does
// proxy-await, and the next signal is forwarded at once.
func TestJobControlRewrittenToNothing(t *testing.T) {
	cmd := exec.Command(proxyAwaitBin, append([]string{"--proxy", "none", "--rewrite", "TSTP:0"},
		child("signals", "SIGTERM")...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := startCmd(t, cmd, nil)
	assert.Equal(t, "ready", p.next())
	p.signal(syscall.SIGTSTP)
	p.signal(syscall.SIGUSR1)
	assert.Equal(t, "SIGUSR1", p.nextSignal(), "the dropped SIGTSTP stopped nothing")
	st, ok := proctree.ReadStat(cmd.Process.Pid)
	require.True(t, ok)
	assert.NotEqual(t, byte('T'), st.State, "proxy-await must not stop itself")
	p.signal(syscall.SIGTERM)
	assert.Equal(t, "SIGTERM", p.nextSignal())
	assert.Equal(t, 0, p.wait())
}

// container is an OCI bundle's root filesystem with busybox and
// proxy-await (this test binary, with the libraries it loads), for runc.
type container struct {
	rootfs string
	state  string // runc --root: our own, so nothing else sees our containers
}

func newContainer(t *testing.T) *container {
	t.Helper()
	_, err := exec.LookPath("runc")
	require.NoError(t, err, "runc is missing: install it (apt-get install runc)")
	requireStatic(t, "/bin/busybox", "install busybox-static (apt-get install busybox-static)")

	c := &container{rootfs: filepath.Join(t.TempDir(), "rootfs"), state: t.TempDir()}
	bin := filepath.Join(c.rootfs, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	copyFile(t, "/bin/busybox", filepath.Join(bin, "busybox"))
	for _, applet := range []string{"sh", "sleep", "echo", "kill", "cat"} {
		require.NoError(t, os.Symlink("busybox", filepath.Join(bin, applet)))
	}
	copyFile(t, proxyAwaitBin, filepath.Join(c.rootfs, "proxy-await"))
	for _, lib := range sharedLibraries(t, proxyAwaitBin) {
		require.NoError(t, os.MkdirAll(filepath.Join(c.rootfs, filepath.Dir(lib)), 0o755))
		copyFile(t, lib, filepath.Join(c.rootfs, lib))
	}
	return c
}

// requireStatic fails unless path is a statically linked executable: the
// container holds nothing else for it to load.
func requireStatic(t *testing.T, path, hint string) {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err, "%s: %s", path, hint)
	defer f.Close()
	for _, prog := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, prog.Type, "%s is dynamically linked: %s", path, hint)
	}
}

// sharedLibraries lists the files the dynamic loader maps for the
// executable at path, the loader itself included, as ldd finds them; none
// for a static one. A test binary is dynamic when it is built with -race or
// with cgo.
func sharedLibraries(t *testing.T, path string) []string {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dynamic := false
	for _, prog := range f.Progs {
		dynamic = dynamic || prog.Type == elf.PT_INTERP
	}
	if !dynamic {
		return nil
	}
	out, err := exec.Command("ldd", path).Output()
	require.NoError(t, err, "ldd %s (install libc-bin)", path)
	var libs []string
	for _, line := range strings.Split(string(out), "\n") {
		// "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)", or the
		// loader's "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO has no file.
		for _, field := range strings.Fields(line) {
			if strings.HasPrefix(field, "/") {
				libs = append(libs, field)
				break
			}
		}
	}
	require.NotEmpty(t, libs, "ldd %s found no library:\n%s", path, out)
	return libs
}

// run starts the container in the foreground with args as its process, so
// that runc's exit status is the container's.
func (c *container) run(t *testing.T, args ...string) (p *proc, id string) {
	t.Helper()
	bundle := t.TempDir()
	spec := exec.Command("runc", "spec", "--rootless=false", "--bundle", bundle)
	out, err := spec.CombinedOutput()
	require.NoError(t, err, "runc spec: %s", out)
	path := filepath.Join(bundle, "config.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	process := cfg["process"].(map[string]any)
	process["args"] = args
	process["terminal"] = false
	cfg["root"] = map[string]any{"path": c.rootfs, "readonly": true}
	data, err = json.MarshalIndent(cfg, "", "\t")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))

	id = fmt.Sprintf("proxy-await-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { _ = exec.Command("runc", "--root", c.state, "delete", "--force", id).Run() })
	cmd := exec.Command("runc", "--root", c.state, "run", "--bundle", bundle, id)
	p = startCmd(t, cmd, func() {
		_ = exec.Command("runc", "--root", c.state, "delete", "--force", id).Run()
		_ = cmd.Process.Kill()
	})
	return p, id
}

func (c *container) kill(t *testing.T, id, sig string) {
	t.Helper()
	out, err := exec.Command("runc", "--root", c.state, "kill", id, sig).CombinedOutput()
	require.NoError(t, err, "runc kill %s %s: %s", id, sig, out)
}

func TestContainer(t *testing.T) {
	c := newContainer(t)
	entry := []string{"/proxy-await", "--proxy", "none", "--", "/bin/sh", "-c"}

	t.Run("TERM reaches the child, the container ends with its status", func(t *testing.T) {
		p, id := c.run(t, append(entry, `trap 'echo got TERM; exit 7' TERM; echo parent $PPID; sleep 1000 & echo ready; wait`)...)
		assert.Equal(t, "parent 1", p.expect("parent "), "proxy-await should be the container's PID 1")
		p.expect("ready")
		c.kill(t, id, "TERM")
		p.expect("got TERM")
		assert.Equal(t, 7, p.wait())
	})
	t.Run("a child that ignores TERM ends with proxy-await's KILL: 137", func(t *testing.T) {
		// --kill-after: proxy-await itself kills the child and exits 137,
		// which runc passes on. Nothing else sends KILL: runc's own kill
		// would read 137 too, without proxy-await's log lines.
		args := append([]string{"/proxy-await", "--proxy", "none", "--kill-after", "3s", "--", "/bin/sh", "-c"},
			`trap 'echo ignoring TERM' TERM; sleep 1000 & echo ready; while :; do wait; done`)
		p, id := c.run(t, args...)
		p.expect("ready")
		c.kill(t, id, "TERM")
		p.expect("ignoring TERM")
		assert.Equal(t, 137, p.wait())
		stderr := p.stderr.String()
		assert.Contains(t, stderr, "sending SIGKILL", "proxy-await sent the KILL")
		assert.Regexp(t, `child killed by signal child_pid=\d+ signal=SIGKILL exit_code=137\n`, stderr,
			"proxy-await saw its child die of it, and exits with that status")
	})
}

// A process that enters the namespace while proxy-await still waits for the
// proxy (kubectl exec) leaves an orphan: when it exits, proxy-await reaps it
// at once, though no child runs and, with no --timeout, none may ever run.
func TestPID1ReapsOrphansDuringTheWait(t *testing.T) {
	fp := testutil.StartFakeProxy(t, "-ready-after", "never")
	p := startAsPID1(t, append([]string{"-v", "--timeout", "0", "--ready-url", fp.URL("/ready")},
		child("signals", "SIGTERM")...)...)
	fp.WaitFor("a not-ready probe", notReadyProbes(1))
	pa := pid1(t, p)

	// nsenter forks into the namespace; its shell backgrounds a process that
	// waits on a FIFO, says its PID and exits, so that process is reparented
	// to PID 1. Closing the FIFO then makes it exit.
	nsenter, err := exec.LookPath("nsenter")
	require.NoError(t, err, "nsenter is missing: install util-linux")
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	out, err := exec.Command(nsenter, "--target", strconv.Itoa(pa), "--pid", "--",
		"sh", "-c", `cat "$1" >/dev/null 2>&1 </dev/null & echo $!`, "sh", fifo).CombinedOutput()
	require.NoError(t, err, "nsenter: %s", out)
	orphan := strings.TrimSpace(string(out))
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the orphan reads
	require.NoError(t, err)
	require.NoError(t, w.Close())

	p.waitLog("reaped orphan pid=" + orphan + " ")
	p.silent("the proxy is still not ready")
	for _, st := range descendants(t, pa) {
		assert.NotEqual(t, byte('Z'), st.State, "zombie in the namespace while waiting: %+v", st)
	}

	fp.Signal(syscall.SIGUSR1)
	p.expect("ready")
	require.NoError(t, syscall.Kill(pa, syscall.SIGTERM))
	p.expect("signal SIGTERM")
	assert.Equal(t, 0, p.wait())
}

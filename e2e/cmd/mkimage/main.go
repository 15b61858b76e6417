// Command mkimage writes a single-layer image as a docker-archive tarball,
// which `ctr images import` loads and the cluster's registry serves
// (testdata/registry): the end-to-end run downloads no image, so its pause,
// busybox and HTTP server images are made from files on this machine.
//
//	mkimage -o pause.tar -name k8s.local/pause:e2e -entrypoint /pause /path/pause:/pause
//	mkimage -o busybox.tar -name k8s.local/busybox:e2e -busybox /bin/busybox
//	mkimage -o httpapp.tar -name k8s.local/httpapp:e2e -entrypoint /httpapp -cmd -serve -cmd :8080 /path/httpapp:/httpapp
//
// Every argument SRC:DST copies a file into the image. -busybox copies a
// static busybox to /bin/busybox and links each of its applets to it. The
// tarball is deterministic: entries are sorted and dated at the epoch, so the
// same inputs give the same image ID.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"
)

type entry struct {
	mode int64
	link string // symlink target
	data []byte
	dir  bool
}

func main() {
	out := flag.String("o", "", "output tarball")
	name := flag.String("name", "", "image reference, e.g. k8s.local/pause:e2e")
	entrypoint := flag.String("entrypoint", "", "the image's entrypoint")
	var cmd []string
	flag.Func("cmd", "a word of the image's CMD (repeatable)", func(w string) error {
		cmd = append(cmd, w)
		return nil
	})
	busybox := flag.String("busybox", "", "a static busybox to install with its applet links")
	flag.Parse()
	if *out == "" || *name == "" {
		fatal(fmt.Errorf("usage: mkimage -o OUT -name REF [-entrypoint PATH] [-cmd WORD]... [-busybox BIN] [SRC:DST...]"))
	}

	files := map[string]*entry{}
	for _, d := range []string{"bin", "dev", "etc", "proc", "sys", "usr", "usr/bin", "usr/sbin", "sbin", "var", "opt"} {
		files[d] = &entry{dir: true, mode: 0o755}
	}
	files["tmp"] = &entry{dir: true, mode: 0o1777}
	for _, arg := range flag.Args() {
		src, dst, ok := strings.Cut(arg, ":")
		if !ok {
			fatal(fmt.Errorf("%q: want SRC:DST", arg))
		}
		addFile(files, src, strings.TrimPrefix(dst, "/"))
	}
	if *busybox != "" {
		addFile(files, *busybox, "bin/busybox")
		list, err := exec.Command(*busybox, "--list-full").Output()
		if err != nil {
			fatal(fmt.Errorf("%s --list-full: %w", *busybox, err))
		}
		for _, applet := range strings.Fields(string(list)) {
			if _, taken := files[applet]; !taken {
				files[applet] = &entry{link: "/bin/busybox", mode: 0o777}
			}
		}
	}

	layer := layerTar(files)
	diffID := fmt.Sprintf("sha256:%x", sha256.Sum256(layer))
	cfg := map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC(),
		"config": map[string]any{
			"Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	}
	if *entrypoint != "" {
		cfg["config"].(map[string]any)["Entrypoint"] = []string{*entrypoint}
	}
	if cmd != nil {
		cfg["config"].(map[string]any)["Cmd"] = cmd
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		fatal(err)
	}
	cfgName := fmt.Sprintf("%x.json", sha256.Sum256(cfgJSON))
	layerName := strings.TrimPrefix(diffID, "sha256:") + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{
		"Config": cfgName, "RepoTags": []string{*name}, "Layers": []string{layerName},
	}})
	if err != nil {
		fatal(err)
	}

	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	for _, f := range []struct {
		name string
		data []byte
	}{{cfgName, cfgJSON}, {layerName, layer}, {"manifest.json", manifest}} {
		must(tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}))
		_, err := tw.Write(f.data)
		must(err)
	}
	must(tw.Close())
	must(os.WriteFile(*out, archive.Bytes(), 0o644))
}

func addFile(files map[string]*entry, src, dst string) {
	data, err := os.ReadFile(src)
	if err != nil {
		fatal(err)
	}
	files[dst] = &entry{data: data, mode: 0o755}
	for d := path.Dir(dst); d != "."; d = path.Dir(d) {
		if _, ok := files[d]; !ok {
			files[d] = &entry{dir: true, mode: 0o755}
		}
	}
}

// layerTar is the image's one layer: every entry, sorted, at the epoch.
func layerTar(files map[string]*entry) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := files[n]
		h := &tar.Header{Name: n, Mode: e.mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		switch {
		case e.dir:
			h.Typeflag, h.Name = tar.TypeDir, n+"/"
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		must(tw.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write(e.data)
			must(err)
		}
	}
	must(tw.Close())
	return buf.Bytes()
}

func must(err error) {
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mkimage:", err)
	os.Exit(1)
}

// Package install copies the running proxy-await into a directory, for
// --install: an init container that runs the proxy-await image puts the
// binary into a volume, and the application's container runs it from there
// without a rebuilt image.
package install

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/hint"
)

// Name is the file Copy writes in the directory.
const Name = "proxy-await"

// Into is --install: copy proxy-await into dir, print the path written on
// stdout, and return the exit code.
func Into(dir string, stdout io.Writer, log *slog.Logger) int {
	path, err := Copy(dir)
	var e *Error
	switch {
	case errors.As(err, &e):
		attrs := []any{"event", "install_failed", "dir", e.Dir}
		if e.Path != "" {
			attrs = append(attrs, "path", e.Path)
		}
		attrs = hint.Attrs(append(attrs, "error", e.Reason), hint.Of(err))
		log.Error("cannot install proxy-await", attrs...)
		return exitcode.CantCreate
	case err != nil:
		log.Error("cannot install proxy-await", "event", "internal_error", "dir", dir, "error", err.Error())
		return exitcode.Internal
	}
	fmt.Fprintln(stdout, path)
	return 0
}

// Error is a directory Copy cannot write into, with the reason. Copy wraps
// it with a hint (hint.Of) when the fix is known. Path is the entry in it that stands in the way,
// when it is that entry and not the directory.
type Error struct {
	Dir    string
	Path   string
	Reason string
}

func (e *Error) Error() string {
	if e.Path != "" {
		return e.Path + ": " + e.Reason
	}
	return e.Dir + ": " + e.Reason
}

// Copy writes the running executable to dir/proxy-await, mode 0755 whatever
// the umask, so that any user can run it. It writes a temporary file in dir
// and renames it over the name, so that a reader never sees half a file. It
// returns the path written.
func Copy(dir string) (string, error) {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return "", failure(dir, err)
	case !st.IsDir():
		return "", hint.New(&Error{Dir: dir, Reason: "not a directory"}, "give the directory to copy proxy-await into")
	}
	// A directory where the file goes cannot be renamed over: said before
	// anything is written, naming the entry rather than dir.
	path := filepath.Join(dir, Name)
	if isDir(path) {
		return "", inTheWay(dir, path)
	}
	self, err := executable()
	if err != nil {
		return "", err
	}
	src, err := os.Open(self)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, "."+Name+"-*")
	if err != nil {
		return "", failure(dir, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, src); err != nil {
		return "", failure(dir, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		return "", failure(dir, err)
	}
	if err := tmp.Sync(); err != nil {
		return "", failure(dir, err)
	}
	if err := tmp.Close(); err != nil {
		return "", failure(dir, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		if isDir(path) { // made since the check above
			return "", inTheWay(dir, path)
		}
		return "", failure(dir, err)
	}
	done = true
	return path, nil
}

// isDir says whether path is a directory itself, not a link to one: a link
// is renamed over as a file is.
func isDir(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.IsDir()
}

// inTheWay is the error for path, the entry of dir that Copy would write, when
// it is a directory.
func inTheWay(dir, path string) error {
	return hint.New(&Error{Dir: dir, Path: path, Reason: "is a directory"},
		"remove that directory, or install into it: --install "+path)
}

// failure is the error for dir from a failed file operation: the system's
// reason without the file's name, and what to do about it.
func failure(dir string, err error) error {
	reason := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		reason = errno.Error()
	}
	fix := ""
	switch {
	case errors.Is(err, syscall.ENOENT):
		fix = "mount a volume there, such as an emptyDir, or create the directory"
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		fix = "mount a writable volume there, such as an emptyDir, or run as a user who may write to it"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		fix = "give the volume room for the binary (a sizeLimit on an emptyDir counts it)"
	}
	return hint.New(&Error{Dir: dir, Reason: reason}, fix)
}

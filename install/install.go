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
)

// Name is the file Copy writes in the directory.
const Name = "proxy-await"

// Run is --install: copy proxy-await into dir, print the path written on
// stdout, and return the exit code.
func Run(dir string, stdout io.Writer, log *slog.Logger) int {
	path, err := Copy(dir)
	var e *Error
	switch {
	case errors.As(err, &e):
		attrs := []any{"event", "install_failed", "dir", e.Dir, "error", e.Reason}
		if e.Hint != "" {
			attrs = append(attrs, "hint", e.Hint)
		}
		log.Error("cannot install proxy-await", attrs...)
		return exitcode.CantCreate
	case err != nil:
		log.Error("cannot install proxy-await", "event", "internal_error", "dir", dir, "error", err.Error())
		return exitcode.Internal
	}
	fmt.Fprintln(stdout, path)
	return 0
}

// Error is a directory Copy cannot write into, with the reason and, when
// the fix is known, a hint.
type Error struct {
	Dir    string
	Reason string
	Hint   string
}

func (e *Error) Error() string { return e.Dir + ": " + e.Reason }

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
		return "", &Error{dir, "not a directory", "give the directory to copy proxy-await into"}
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
	path := filepath.Join(dir, Name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", failure(dir, err)
	}
	done = true
	return path, nil
}

// failure is the error for dir from a failed file operation: the system's
// reason without the file's name, and what to do about it.
func failure(dir string, err error) error {
	reason := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		reason = errno.Error()
	}
	hint := ""
	switch {
	case errors.Is(err, syscall.ENOENT):
		hint = "mount a volume there, such as an emptyDir, or create the directory"
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		hint = "mount a writable volume there, such as an emptyDir, or run as a user who may write to it"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		hint = "give the volume room for the binary (a sizeLimit on an emptyDir counts it)"
	}
	return &Error{dir, reason, hint}
}

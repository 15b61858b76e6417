package wrapper

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/hint"
)

// defaultPath is where the command is looked up when the environment has no
// PATH, as execvp does (tini, dumb-init and linkerd-await find commands there).
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// shell runs a file the kernel refuses as not executable (a script without a
// "#!" line), as execvp does.
const shell = "/bin/sh"

// StartError reports that the command could not be started, in words a
// user can act on, with the exit code a shell would give for the same
// failure. What to do about it, when that is known, is Err's hint
// (hint.Of).
type StartError struct {
	Code int
	Msg  string // what went wrong, naming the file at fault
	Err  error  // the system's error
}

func (e *StartError) Error() string { return e.Msg }
func (e *StartError) Unwrap() error { return e.Err }

// hint says what to do about e.
func (e *StartError) hint(h string) { e.Err = hint.New(e.Err, h) }

// spawn starts cmd the way execvp would: the command is looked up in PATH
// (or defaultPath), and a file the kernel refuses with ENOEXEC runs under
// /bin/sh. cmd.Path is ignored; cmd.Args[0] is the command.
func spawn(cmd *exec.Cmd) (*os.Process, error) {
	path, err := lookPath(cmd.Args[0])
	if err != nil {
		return nil, err
	}
	run := *cmd
	run.Path = path
	err = run.Start()
	if errors.Is(err, syscall.ENOEXEC) {
		if e := binaryError(path, err); e != nil {
			return nil, e // machine code, which /bin/sh would read as shell
		}
		sh := *cmd
		sh.Path, sh.Args = shell, append([]string{shell, path}, cmd.Args[1:]...)
		if err = sh.Start(); err == nil {
			return sh.Process, nil
		}
		path = shell
	}
	if err != nil {
		return nil, startFailure(path, err)
	}
	return run.Process, nil
}

// lookPath finds the file to execute for name. A name with a slash is the
// file itself. Otherwise each PATH entry is tried in turn ("" is the current
// directory) and the first executable file wins; when no entry holds one,
// the first file found that is not executable is returned, so that its exec
// fails with EACCES (126), as with execvp and shells.
func lookPath(name string) (string, error) {
	if name == "" {
		// As a shell does with "": not found, 127.
		return "", &StartError{
			Code: exitcode.NotFound,
			Msg:  "the command is an empty string: not found",
			Err:  hint.New(exec.ErrNotFound, "give the command's name or path"),
		}
	}
	if strings.Contains(name, "/") {
		return name, nil
	}
	path, ok := os.LookupEnv("PATH")
	if !ok {
		path = defaultPath
	}
	var denied string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		file := filepath.Join(dir, name)
		if !strings.Contains(file, "/") {
			file = "./" + file // found in ".": still a path, never looked up again
		}
		st, err := os.Stat(file)
		switch {
		case err != nil || st.IsDir():
			continue
		case executable(file, st):
			return file, nil
		case denied == "":
			denied = file
		}
	}
	if denied != "" {
		return denied, nil
	}
	return "", &StartError{
		Code: exitcode.NotFound,
		Msg:  fmt.Sprintf("%s: command not found in PATH (%s)", name, path),
		Err:  hint.New(exec.ErrNotFound, "give the command's full path, or add its directory to PATH"),
	}
}

func executable(file string, st fs.FileInfo) bool {
	switch err := unix.Faccessat(unix.AT_FDCWD, file, unix.X_OK, unix.AT_EACCESS); err {
	case nil:
		return true
	case syscall.ENOSYS, syscall.EPERM: // no faccessat2 (old kernels, seccomp): trust the mode
		return st.Mode()&0o111 != 0
	}
	return false
}

// startFailure explains why exec of file failed.
func startFailure(file string, err error) *StartError {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return &StartError{Code: exitcode.NotExecutable, Msg: file + ": cannot be started", Err: err}
	}
	e := &StartError{Code: exitcode.NotExecutable, Msg: file + ": " + errno.Error(), Err: errno}
	switch errno {
	case syscall.ENOENT:
		e.Code = exitcode.NotFound
		if _, err := os.Stat(file); err != nil {
			e.Msg = file + ": no such file"
			return e
		}
		// The file is there, so what is missing is what the kernel loads
		// to run it: a script's interpreter or a binary's dynamic loader.
		// Shells exit 127 for it too.
		switch kind, interp := interpreter(file); kind {
		case "crlf":
			e.Msg = fmt.Sprintf("%s: its #! line ends in a carriage return: the script has Windows line endings (CRLF)", file)
			e.hint("convert " + file + " to Unix line endings (LF), with dos2unix or sed -i 's/\\r$//'")
		case "script":
			e.Msg = fmt.Sprintf("%s: its interpreter %s does not exist", file, interp)
			e.hint("fix the script's #! line, or install " + interp + " in the image")
		case "binary":
			e.Msg = fmt.Sprintf("%s: its dynamic loader %s does not exist", file, interp)
			e.hint("the binary is dynamically linked for another C library or image: " +
				"build it statically (CGO_ENABLED=0 for Go), or use an image that has " + interp)
		default:
			e.Msg = file + ": a file it needs to run does not exist"
		}
	case syscall.EACCES:
		st, err := os.Stat(file)
		if err == nil && st.IsDir() {
			e.Msg = file + ": is a directory"
			return e
		}
		// The file may run, and what the kernel may not run is the
		// program it names: a script's interpreter, a binary's loader.
		if err == nil && executable(file, st) {
			if kind, interp := interpreter(file); kind == "script" || kind == "binary" {
				what := map[string]string{"script": "interpreter", "binary": "dynamic loader"}[kind]
				e.Msg = fmt.Sprintf("%s: its %s %s is not executable, or on a noexec mount", file, what, interp)
				fix := "make " + interp + " executable with chmod +x"
				if kind == "script" {
					fix += ", or fix the script's #! line"
				}
				e.hint(fix)
				return e
			}
		}
		e.Msg = file + ": permission denied: not an executable file, or on a noexec mount"
		e.hint("make it executable with chmod +x")
	}
	return e
}

// binaryError explains an ELF file that the kernel refused with ENOEXEC:
// a binary built for another machine, or a damaged one. It is nil when file
// is not ELF, a script without "#!" that execvp runs under /bin/sh.
func binaryError(file string, err error) *StartError {
	f, ferr := os.Open(file)
	if ferr != nil {
		return nil
	}
	defer f.Close()
	var magic [len(elfMagic)]byte
	if _, ferr := io.ReadFull(f, magic[:]); ferr != nil || string(magic[:]) != elfMagic {
		return nil
	}
	e := &StartError{Code: exitcode.NotExecutable, Msg: file + ": a binary this system cannot run (exec format error)", Err: err}
	if bin, ok := readELF(f); ok {
		if arch := goarch(bin); arch != runtime.GOARCH {
			e.Msg = fmt.Sprintf("%s: a binary built for %s; this machine runs %s", file, arch, runtime.GOARCH)
			e.hint("build the image for " + runtime.GOARCH + ", or for several platforms with docker buildx build --platform")
		}
	}
	return e
}

// interpreter names what the kernel runs file with: the program on a
// script's "#!" line, or a dynamically linked binary's loader (PT_INTERP).
// kind is "script", "binary", "crlf" for a script whose interpreter's name
// ends in a carriage return (its #! line ends in one), or "" when file is
// none of these.
func interpreter(file string) (kind, interp string) {
	f, err := os.Open(file)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadSlice('\n')
	if rest, ok := bytes.CutPrefix(line, []byte("#!")); ok {
		// As the kernel reads it (binfmt_script): blanks before the
		// name, which ends at a blank or the end of the line; a carriage
		// return is part of the name.
		rest = bytes.TrimLeft(bytes.TrimSuffix(rest, []byte("\n")), " \t")
		if i := bytes.IndexAny(rest, " \t"); i >= 0 {
			rest = rest[:i]
		}
		switch {
		case len(rest) == 0:
			return "", ""
		case rest[len(rest)-1] == '\r':
			return "crlf", string(rest)
		}
		return "script", string(rest)
	}
	bin, ok := readELF(f)
	// The kernel refuses a loader's name longer than PATH_MAX with ENOEXEC.
	if !ok || bin.interp == nil || bin.interp.filesz > unix.PathMax {
		return "", ""
	}
	data := make([]byte, bin.interp.filesz)
	if _, err := f.ReadAt(data, int64(bin.interp.off)); err != nil {
		return "", ""
	}
	return "binary", string(bytes.TrimRight(data, "\x00"))
}

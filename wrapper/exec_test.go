package wrapper

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/exitcode"
	"github.com/proxy-await/proxy-await/internal/logging"

	"github.com/proxy-await/proxy-await/internal/hint"
)

// runOut runs args under Supervise and returns the exit code and what the child
// wrote to stdout, or the start error.
func runOut(t *testing.T, args ...string) (int, string, *StartError) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	require.NoError(t, err)
	defer out.Close()
	sigs := Notify()
	code, err := (&Supervisor{sigs: sigs, log: logging.Discard()}).Supervise(Config{Args: args, Stdout: out})
	Stop(sigs)
	if err != nil {
		var se *StartError
		require.ErrorAs(t, err, &se)
		return 0, "", se
	}
	data, err := os.ReadFile(out.Name())
	require.NoError(t, err)
	return code, string(data), nil
}

// writeFile writes an executable (or not) file in dir.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), mode))
	require.NoError(t, os.Chmod(path, mode))
	return path
}

// Without PATH in the environment, the command is looked up in
// /usr/local/bin:/usr/bin:/bin, as execvp does.
func TestNoPathUsesTheDefaultPath(t *testing.T) {
	t.Setenv("PATH", "")
	require.NoError(t, os.Unsetenv("PATH"))
	code, out, se := runOut(t, "sh", "-c", "echo found; exit 3")
	require.Nil(t, se, "sh was not found without PATH")
	assert.Equal(t, 3, code)
	assert.Equal(t, "found\n", out)
}

// A script without "#!" runs under /bin/sh with its arguments, as execvp
// runs it, found by path or in PATH.
func TestScriptWithoutShebangRunsUnderSh(t *testing.T) {
	dir := t.TempDir()
	script := writeFile(t, dir, "plain-script", "echo \"ran $0 with $1 $2\"\nexit 4\n", 0o755)
	code, out, se := runOut(t, script, "a", "b c")
	require.Nil(t, se)
	assert.Equal(t, 4, code)
	assert.Equal(t, "ran "+script+" with a b c\n", out)

	t.Setenv("PATH", dir)
	code, out, se = runOut(t, "plain-script", "x")
	require.Nil(t, se)
	assert.Equal(t, 4, code)
	assert.Equal(t, "ran "+script+" with x \n", out)
}

// In PATH, the first executable match wins over an earlier file that is not
// executable; with no executable match, the command is not executable (126),
// as in shells, not "not found".
func TestPathLookupOfFilesThatAreNotExecutable(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	writeFile(t, first, "job", "echo first\n", 0o644)
	t.Setenv("PATH", first)
	_, _, se := runOut(t, "job")
	require.NotNil(t, se, "a file that is not executable must not run")
	assert.Equal(t, exitcode.NotExecutable, se.Code)
	assert.Equal(t, filepath.Join(first, "job")+": permission denied: not an executable file, or on a noexec mount", se.Error())

	writeFile(t, second, "job", "#!/bin/sh\necho second\n", 0o755)
	t.Setenv("PATH", first+":"+second)
	code, out, se := runOut(t, "job")
	require.Nil(t, se)
	assert.Equal(t, 0, code)
	assert.Equal(t, "second\n", out)
}

// A command whose interpreter is missing names the interpreter, and exits
// 127 as bash and dash do; no message carries Go's "fork/exec".
func TestStartErrorMessages(t *testing.T) {
	dir := t.TempDir()
	script := writeFile(t, dir, "bad-interp", "#!/nonexistent/interp -x\necho never\n", 0o755)
	loaderless := binaryWithLoader(t, dir, "/nonexistent/ld.so")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{script}, exitcode.NotFound, script + ": its interpreter /nonexistent/interp does not exist"},
		{[]string{loaderless}, exitcode.NotFound, loaderless + ": its dynamic loader /nonexistent/ld.so does not exist"},
		{[]string{"/nonexistent"}, exitcode.NotFound, "/nonexistent: no such file"},
		{[]string{"/"}, exitcode.NotExecutable, "/: is a directory"},
		{[]string{"/proc/version"}, exitcode.NotExecutable, "/proc/version: permission denied: not an executable file, or on a noexec mount"},
	} {
		_, _, se := runOut(t, tc.args...)
		require.NotNil(t, se, "%v", tc.args)
		assert.Equal(t, tc.code, se.Code, "%v", tc.args)
		assert.Equal(t, tc.msg, se.Error())
		assert.NotContains(t, se.Error()+hint.Of(se), "fork/exec")
	}
	t.Setenv("PATH", dir)
	_, _, se := runOut(t, "no-such-command-proxy-await")
	require.NotNil(t, se)
	assert.Equal(t, exitcode.NotFound, se.Code)
	assert.Equal(t, "no-such-command-proxy-await: command not found in PATH ("+dir+")", se.Error())
}

// binaryWithLoader copies a dynamically linked system binary into dir with
// its PT_INTERP changed to loader, as a glibc binary in a scratch image.
func binaryWithLoader(t *testing.T, dir, loader string) string {
	t.Helper()
	src := "/bin/true"
	f, err := elf.Open(src)
	require.NoError(t, err)
	defer f.Close()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			require.Less(t, len(loader), int(p.Filesz), "the new loader's name must fit")
			field := data[p.Off : p.Off+p.Filesz]
			copy(field, loader)
			for i := len(loader); i < len(field); i++ {
				field[i] = 0
			}
			path := filepath.Join(dir, "loaderless")
			require.NoError(t, os.WriteFile(path, data, 0o755))
			return path
		}
	}
	t.Fatalf("%s is statically linked: a dynamically linked binary is needed (install coreutils)", src)
	return ""
}

// A script saved with Windows line endings has "#!/bin/sh\r" for its first
// line: the kernel looks for an interpreter named "/bin/sh\r". The error
// says so and names the script, rather than that /bin/sh does not exist.
func TestScriptWithWindowsLineEndings(t *testing.T) {
	dir := t.TempDir()
	for _, line := range []string{"#!/bin/sh\r\necho never\r\n", "#! /bin/sh\r\necho never\r\n", "#!/bin/sh\r"} {
		script := writeFile(t, dir, "crlf.sh", line, 0o755)
		_, _, se := runOut(t, script)
		require.NotNil(t, se, "%q", line)
		assert.Equal(t, exitcode.NotFound, se.Code, "%q", line)
		assert.Equal(t, script+": its #! line ends in a carriage return: the script has Windows line endings (CRLF)", se.Error(), "%q", line)
		assert.Equal(t, `convert `+script+` to Unix line endings (LF), with dos2unix or sed -i 's/\r$//'`, hint.Of(se), "%q", line)
	}
}

// An interpreter (or dynamic loader) that exists but is not executable is
// named as the culprit: chmod +x on the script would change nothing.
func TestInterpreterThatIsNotExecutable(t *testing.T) {
	dir := t.TempDir()
	interp := writeFile(t, dir, "interp", "#!/bin/sh\necho never\n", 0o644)
	script := writeFile(t, dir, "job", "#!"+interp+" -x\necho never\n", 0o755)
	_, _, se := runOut(t, script)
	require.NotNil(t, se)
	assert.Equal(t, exitcode.NotExecutable, se.Code)
	assert.Equal(t, script+": its interpreter "+interp+" is not executable, or on a noexec mount", se.Error())
	assert.Equal(t, "make "+interp+" executable with chmod +x, or fix the script's #! line", hint.Of(se))

	short, err := os.MkdirTemp("/tmp", "ld") // the loader's name must fit in the binary
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(short) })
	loader := writeFile(t, short, "ld", "", 0o644)
	bin := binaryWithLoader(t, dir, loader)
	_, _, se = runOut(t, bin)
	require.NotNil(t, se)
	assert.Equal(t, exitcode.NotExecutable, se.Code)
	assert.Equal(t, bin+": its dynamic loader "+loader+" is not executable, or on a noexec mount", se.Error())

	// The script itself not executable: the script is named.
	require.NoError(t, os.Chmod(interp, 0o755))
	require.NoError(t, os.Chmod(script, 0o644))
	_, _, se = runOut(t, script)
	require.NotNil(t, se)
	assert.Equal(t, script+": permission denied: not an executable file, or on a noexec mount", se.Error())
}

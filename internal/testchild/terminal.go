//go:build linux

package testchild

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/proxy-await/proxy-await/internal/exitcode"
)

// Scenarios for the terminal tests.
func init() {
	// stop-cont-read N: like stop-cont, then read a line from stdin (the
	// terminal), print "read LINE" and exit N. A read from a terminal whose
	// foreground is another group would stop it instead.
	scenarios["stop-cont-read"] = func(args []string) {
		code := atoi(args[0])
		untilContinued()
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Printf("read %s\n", strings.TrimSpace(line))
		os.Exit(code)
	}

	// jobshell SCENARIO PROGRAM ARG...: a job-control shell reduced to one
	// job. Started as a session leader whose controlling terminal is stdin,
	// it runs PROGRAM (its child playing SCENARIO) as a foreground job in a
	// process group of its own, sharing its stdin, stdout and stderr. It
	// says "shell: stopped SIGNAME" each time the job stops, taking the
	// terminal back as a shell does, and waits for a line "fg" on file
	// descriptor 3 to resume the job in the foreground. At the end it says
	// "shell: exited CODE foreground job|shell|PGRP", naming the terminal's
	// foreground group as the job left it.
	scenarios["jobshell"] = func(args []string) {
		runtime.LockOSThread()
		syscall.CloseOnExec(3) // the commands are the shell's own
		job := exec.Command(args[1], args[2:]...)
		job.Env = append(os.Environ(), Env+"="+args[0])
		job.Stdin, job.Stdout, job.Stderr = os.Stdin, os.Stdout, os.Stderr
		job.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0}
		if err := job.Start(); err != nil {
			panic(err)
		}
		pid := job.Process.Pid
		fg := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(os.NewFile(3, "commands"))
			for sc.Scan() {
				if sc.Text() == "fg" {
					fg <- struct{}{}
				}
			}
		}()
		for {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err == syscall.EINTR {
				continue
			} else if err != nil {
				panic(err)
			}
			if ws.Stopped() {
				foreground(unix.Getpgrp())
				fmt.Printf("shell: stopped %s\n", sigName(ws.StopSignal()))
				<-fg
				foreground(pid)
				if err := syscall.Kill(-pid, syscall.SIGCONT); err != nil {
					panic(err)
				}
				continue
			}
			code := exitcode.Of(ws)
			owner := "other"
			switch g, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); {
			case err != nil:
				panic(err)
			case g == pid:
				owner = "job"
			case g == unix.Getpgrp():
				owner = "shell"
			default:
				owner = fmt.Sprint(g)
			}
			fmt.Printf("shell: exited %d foreground %s\n", code, owner)
			return
		}
	}
}

// foreground makes pgrp the terminal's foreground group, with SIGTTOU
// blocked as a shell ignores it. The caller is locked to its thread.
func foreground(pgrp int) {
	var set, old unix.Sigset_t
	n, w := int(syscall.SIGTTOU)-1, int(unsafe.Sizeof(set.Val[0]))*8
	set.Val[n/w] |= 1 << (n % w)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		panic(err)
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	if err := unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, pgrp); err != nil {
		panic(err)
	}
}

// DetachTerminal drops the controlling terminal of this process and of those
// it starts from now on, so that a developer's terminal cannot change what
// the tests see: proxy-await does not forward a SIGINT that its terminal may
// have sent to its whole foreground group.
func DetachTerminal() {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return // none
	}
	_ = unix.IoctlSetInt(fd, unix.TIOCNOTTY, 0)
	unix.Close(fd)
}

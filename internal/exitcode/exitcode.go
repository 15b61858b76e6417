// Package exitcode names every code proxy-await exits with that is not the
// child's own, with where each number comes from.
package exitcode

import "syscall"

const (
	Findings      = 1   // --check found an error in the manifests, as linters do
	Usage         = 2   // bad flags or environment, as Go's flag package and most CLIs do
	Unavailable   = 69  // EX_UNAVAILABLE (sysexits.h): the proxy never became ready
	Internal      = 70  // EX_SOFTWARE (sysexits.h): a bug or a failing system call
	CantCreate    = 73  // EX_CANTCREAT (sysexits.h): --install cannot write its file
	NotExecutable = 126 // the command exists but cannot be executed (POSIX shells)
	NotFound      = 127 // the command was not found (POSIX shells)
	SignalBase    = 128 // 128+N: ended by signal N (POSIX shells)
)

// Of turns a wait status into the code a shell would report: the exit
// status, or SignalBase+N for a process ended by signal N.
func Of(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return SignalBase + int(ws.Signal())
	}
	return ws.ExitStatus()
}

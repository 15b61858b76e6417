package signals

import "syscall"

// Max is the highest signal number (SIGRTMAX).
const Max = 64

// Reserved reports the real-time signals C libraries keep for themselves
// (glibc's SIGCANCEL and SIGSETXID, musl's SIGSYNCCALL): the Go runtime does
// not let a program catch them, and no program expects them from outside.
func Reserved(s syscall.Signal) bool { return s >= 32 && s <= 34 }

//go:build !linux

package signals

import "syscall"

// Max is the highest signal number.
const Max = 31

// Reserved reports no signal: the real-time signals are Linux's.
func Reserved(syscall.Signal) bool { return false }

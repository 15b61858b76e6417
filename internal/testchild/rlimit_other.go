//go:build !linux

package testchild

// openFiles leaves the open-file limit as it is: the drain benchmark that
// needs many runs on Linux only.
func openFiles(int) {}

//go:build !linux

package install

import "os"

// executable is the running executable's path, as the system reports it.
func executable() (string, error) { return os.Executable() }

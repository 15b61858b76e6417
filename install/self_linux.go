package install

// executable is the running executable as the kernel holds it: the file
// that was started, whatever name or path started it, even if it has been
// replaced or removed since.
func executable() (string, error) { return "/proc/self/exe", nil }

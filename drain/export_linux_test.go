package drain

// unfiltered has every feed keep every report, as before the kernel filter,
// until the returned func restores the filter.
func unfiltered() (restore func()) {
	filter = keepEvery
	return func() { filter = portProgram }
}

package drain

// received is how many destroy reports have reached w: those the kernel's
// filter let through.
func (w *Watch) received() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reports
}

// unfiltered has every feed keep every report, as before the kernel filter,
// until the returned func restores the filter.
func unfiltered() (restore func()) {
	filter = keepEvery
	return func() { filter = portProgram }
}

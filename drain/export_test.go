package drain

// Start is Learn and Hold at once, for a watch with no time to learn.
func Start(o Options) *Watch {
	w := Learn(o)
	w.Hold()
	return w
}

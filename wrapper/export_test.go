package wrapper

import (
	"os"
	"os/signal"
)

// Stop undoes Notify.
func Stop(c chan os.Signal) { signal.Stop(c) }

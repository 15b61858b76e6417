//go:build !no_slog

package main

import (
	"log/slog"
	"os"
)

// log/slog writes JSON lines, as internal/logging does under --log-format
// json; at the error level, nothing here is written.
func init() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	logJSON = func(msg string) { log.Info(msg, "event", "start") }
}

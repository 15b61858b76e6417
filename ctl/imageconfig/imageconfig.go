// Package imageconfig finds the command a container image runs, its
// ENTRYPOINT and CMD, for a container whose manifest sets no command:
// first from an entrypoints file (air-gapped clusters), else from the
// image's configuration in its registry, read as docker and crane read it
// (the Docker config and its credential helpers; the manifest of one
// platform from a multi-platform index), once per image per run and within
// a bound of time and size.
//
// The API is three calls. New(Options) makes the Resolver of one run, from
// --platform, --entrypoints and --registry. Resolver.Resolve(ctx, image)
// gives the image's Config (ENTRYPOINT, CMD, and the digest of the manifest
// they were read from, for the annotation that tells a changed image); it
// is safe for concurrent use, and every pod of the run that names the image,
// however spelt (nginx:1.27, docker.io/library/nginx:1.27), shares one
// fetch. Command(config, args) applies Kubernetes' rule and gives the
// command and args that a container writing its command out must have. A
// failure is an *Error: its Reason says what was missing, its text names
// the fix, and no credential is ever in it.
package imageconfig

import (
	"fmt"
	"slices"
)

// Config is what an image runs when a container sets no command.
type Config struct {
	// Image is the reference in full, as every spelling of it is known:
	// index.docker.io/library/nginx:1.27.
	Image      string
	Entrypoint []string
	Cmd        []string
	// Digest is the digest of the image manifest whose configuration was
	// read, the one of --platform when the reference names an index
	// ("sha256:..."); "" when the entrypoints file answered.
	Digest string
}

// Command is what a container of img with no command of its own runs,
// split as a container that writes its command out must have it: command
// is the image's ENTRYPOINT, and args the container's own args or, when it
// has none, the image's CMD, written out because a container with a
// command runs no CMD. This is Kubernetes' rule as the container runtime
// applies it: an empty list is no list, and an ENTRYPOINT of one empty word
// is none. An image that gives nothing to run is an error.
func Command(img Config, args []string) (command, cmdArgs []string, err error) {
	command = slices.Clone(img.Entrypoint)
	if len(command) == 1 && command[0] == "" {
		command = nil
	}
	cmdArgs = slices.Clone(args)
	if len(cmdArgs) == 0 {
		cmdArgs = slices.Clone(img.Cmd)
	}
	if len(command) == 0 && len(cmdArgs) == 0 {
		return nil, nil, &Error{Image: img.Image, Reason: NoCommand,
			Detail: "its configuration has neither ENTRYPOINT nor CMD, and the container no args, so there is nothing it runs",
			Fix:    "write the command the container runs into the manifest as its command"}
	}
	return command, cmdArgs, nil
}

// String shows c as a reader of a log line wants it.
func (c Config) String() string {
	return fmt.Sprintf("%s: entrypoint %q cmd %q", c.Image, c.Entrypoint, c.Cmd)
}

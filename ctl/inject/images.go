// images.go: the command a container runs when its manifest sets none,
// its image's ENTRYPOINT and CMD, read before anything is written: from an
// entrypoints file or the image's registry (package imageconfig), each
// image once, several at a time.

package inject

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/proxy-await/proxy-await/ctl/imageconfig"
	"github.com/proxy-await/proxy-await/ctl/invocation"
)

// Resolver finds what an image runs: *imageconfig.Resolver, which reads
// an entrypoints file, then the image's registry.
type Resolver interface {
	Resolve(ctx context.Context, image string) (imageconfig.Config, error)
}

// fetchers is how many images are read from registries at a time: their
// answers take a round trip or three each, and a registry throttles a
// client that asks for many at once.
const fetchers = 8

// images are the configurations of the images whose containers set no
// command, as far as they were found, by the image as containers name it.
type images struct {
	found map[string]imageconfig.Config
	err   map[string]error
	// stale are the images whose command was not found now, which is
	// that the last inject wrote, and why: the error of this run.
	stale map[string]error
	// was is each image's digest as the last inject read it, where it
	// differs from what was read now.
	was map[string]string
}

// Config is what img runs, for the model of what containers run
// (invocation.Images).
func (im *images) Config(img string) (invocation.Image, bool) {
	c, ok := im.found[img]
	return invocation.Image{Entrypoint: c.Entrypoint, Cmd: c.Cmd}, ok
}

// resolve reads the images refs, with r, at most fetchers at a time; with
// no r, none is found. Where an image is not found and the last inject
// wrote its command (prior), that command stands.
func resolve(ctx context.Context, r Resolver, refs []string, prior map[string]imageconfig.Config) *images {
	im := &images{found: map[string]imageconfig.Config{}, err: map[string]error{}, stale: map[string]error{}, was: map[string]string{}}
	defer func() {
		for ref, c := range prior {
			if err, failed := im.err[ref]; failed {
				im.found[ref], im.stale[ref] = c, err
				delete(im.err, ref)
			} else if now, ok := im.found[ref]; ok && c.Digest != "" && now.Digest != c.Digest {
				im.was[ref] = c.Digest
			}
		}
	}()
	if r == nil {
		for _, ref := range refs {
			im.err[ref] = errNoResolver
		}
		return im
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan string)
	for range min(fetchers, len(refs)) {
		wg.Go(func() {
			for ref := range next {
				c, err := r.Resolve(ctx, ref)
				mu.Lock()
				if err != nil {
					im.err[ref] = err
				} else {
					im.found[ref] = c
				}
				mu.Unlock()
			}
		})
	}
	for _, ref := range refs {
		next <- ref
	}
	close(next)
	wg.Wait()
	return im
}

// errNoResolver is an image no resolver was asked for.
var errNoResolver = errors.New("no registry and no entrypoints file were given to read it from")

// literal is a word of an image's configuration as a container's command
// or args must hold it: the kubelet expands $(VAR) there, and reads $$ as
// one $, while the runtime passes the image's own words as they are.
func literal(words []string) []string {
	var out []string
	for _, w := range words {
		out = append(out, strings.ReplaceAll(w, "$", "$$"))
	}
	return out
}

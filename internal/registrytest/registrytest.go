// Package registrytest serves container registries for the tests of what
// reads images' configurations (ctl/imageconfig, ctl/inject):
// go-containerregistry's own registry, real HTTP on a loopback port, with
// images whose ENTRYPOINT and CMD a test chooses, single or in a
// multi-platform index, under any registry's name.
package registrytest

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
)

// Registry is go-containerregistry's registry, which serves the
// distribution API over real HTTP, without its log of every request.
func Registry() http.Handler {
	return registry.New(registry.Logger(log.New(io.Discard, "", 0)))
}

// Serve serves h on a loopback port for the test and gives its host:port,
// which the registry client reaches over plain HTTP, as it does any
// loopback registry.
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// Counter counts the requests that reach a registry, by method and path.
// It stays in front of the registry for the whole test, so that a second
// fetch would be counted too.
type Counter struct {
	next http.Handler
	mu   sync.Mutex
	seen map[string]int
}

// Counting is a Counter in front of next.
func Counting(next http.Handler) *Counter { return &Counter{next: next, seen: map[string]int{}} }

func (c *Counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.seen[r.Method+" "+r.URL.Path]++
	c.mu.Unlock()
	c.next.ServeHTTP(w, r)
}

// Count is how many requests came for method and path.
func (c *Counter) Count(method, path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[method+" "+path]
}

// Total is how many requests came to anything but the API's version check.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.seen {
		if k != "GET /v2/" {
			n += v
		}
	}
	return n
}

// BasicAuth lets through the requests that carry user and password, and
// answers the others 401 as a registry that wants credentials does, with
// an error that quotes the Authorization header it was sent: a registry
// may be careless, and nothing of it must reach a message.
func BasicAuth(next http.Handler, user, password string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); ok && u == user && p == password {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
			"code": "UNAUTHORIZED", "message": "not with " + r.Header.Get("Authorization")}}})
	})
}

// Image is a random image whose configuration runs entrypoint and cmd on
// platform (OS/ARCH[/VARIANT]).
func Image(t testing.TB, platform string, entrypoint, cmd []string) v1.Image {
	t.Helper()
	img, err := random.Image(128, 1)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	p, err := v1.ParsePlatform(platform)
	require.NoError(t, err)
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Entrypoint, cf.Config.Cmd = entrypoint, cmd
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	return img
}

// Index is a multi-platform index of imgs, each with its configuration's
// platform in the index.
func Index(t testing.TB, imgs ...v1.Image) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cf.Platform()}})
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

// Push writes an image or an index to ref, through transport tr (nil:
// the default), and gives its digest.
func Push(t testing.TB, ref string, what any, tr http.RoundTripper) v1.Hash {
	t.Helper()
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	opts := []remote.Option{}
	if tr != nil {
		opts = append(opts, remote.WithTransport(tr))
	}
	var d v1.Hash
	switch w := what.(type) {
	case v1.Image:
		require.NoError(t, remote.Write(r, w, opts...))
		d, err = w.Digest()
	case v1.ImageIndex:
		require.NoError(t, remote.WriteIndex(r, w, opts...))
		d, err = w.Digest()
	default:
		t.Fatalf("push: %T is neither image nor index", what)
	}
	require.NoError(t, err)
	return d
}

// Digest is the digest of img's manifest.
func Digest(t testing.TB, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	require.NoError(t, err)
	return d
}

// ConfigDigest is the digest of img's configuration blob.
func ConfigDigest(t testing.TB, img v1.Image) v1.Hash {
	t.Helper()
	m, err := img.Manifest()
	require.NoError(t, err)
	return m.Config.Digest
}

// DockerConfig makes a Docker config directory holding config, and points
// DOCKER_CONFIG at it for the test, as docker login would leave it.
func DockerConfig(t *testing.T, config map[string]any) {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600))
	t.Setenv("DOCKER_CONFIG", dir)
	// Nothing of the developer's own: no ~/.docker, no Podman auth file.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("REGISTRY_AUTH_FILE", "")
}

// hosts serves every registry host from one loopback server, each host
// its own registry, so that references keep the names manifests give them
// (docker.io/library/nginx:1.27) and no request leaves the machine.
type hosts struct {
	mu   sync.Mutex
	regs map[string]http.Handler
}

func (h *hosts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if h.regs == nil {
		h.regs = map[string]http.Handler{}
	}
	reg, ok := h.regs[r.Host]
	if !ok {
		reg = Registry()
		h.regs[r.Host] = reg
	}
	h.mu.Unlock()
	reg.ServeHTTP(w, r)
}

// redirect is a transport that sends every request to the loopback
// server at addr over plain HTTP, keeping the host it was for.
type redirect struct{ addr string }

func (rd redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	if out.Host == "" {
		out.Host = req.URL.Host
	}
	out.URL.Scheme, out.URL.Host = "http", rd.addr
	resp, err := http.DefaultTransport.RoundTrip(out)
	if resp != nil {
		// The client resolves a Location (a blob upload's) against the
		// request it knows: the host's, not the loopback server's.
		resp.Request = req
	}
	return resp, err
}

// World serves all registries from one loopback server behind a counter,
// and gives the transport that reaches them.
func World(t testing.TB) (*Counter, http.RoundTripper) {
	t.Helper()
	c := Counting(&hosts{})
	return c, redirect{addr: Serve(t, c)}
}

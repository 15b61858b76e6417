package imageconfig

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
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
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"
)

// helperName is the credential helper this test binary plays: the Docker
// config names it "imageconfig-test", and docker's client runs
// docker-credential-imageconfig-test from PATH, where testscript.Main puts
// this binary under that name.
const helperName = "imageconfig-test"

// The helper's answer comes from the test's environment.
const (
	helperServerEnv = "IMAGECONFIG_TEST_HELPER_SERVER"
	helperUserEnv   = "IMAGECONFIG_TEST_HELPER_USER"
	helperSecretEnv = "IMAGECONFIG_TEST_HELPER_SECRET"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"docker-credential-" + helperName: credentialHelper})
}

// credentialHelper answers "get" as a Docker credential helper does: the
// server's name on stdin, its credentials as JSON on stdout, and "not
// found" for a server it has none for.
func credentialHelper() {
	server, _ := io.ReadAll(os.Stdin)
	if len(os.Args) != 2 || os.Args[1] != "get" {
		fmt.Println("only get is played")
		os.Exit(1)
	}
	if strings.TrimSpace(string(server)) != os.Getenv(helperServerEnv) {
		fmt.Println("credentials not found in native keychain")
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{
		"ServerURL": strings.TrimSpace(string(server)),
		"Username":  os.Getenv(helperUserEnv),
		"Secret":    os.Getenv(helperSecretEnv),
	})
}

// quietRegistry is go-containerregistry's registry, which serves the
// distribution API over real HTTP, without its log of every request.
func quietRegistry() http.Handler {
	return registry.New(registry.Logger(log.New(io.Discard, "", 0)))
}

// serve serves h on a loopback port for the test and gives its host:port,
// which the registry client reaches over plain HTTP, as it does any
// loopback registry.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// counter counts the requests that reach a registry, by method and path.
// It stays in front of the registry for the whole test, so that a second
// fetch would be counted too.
type counter struct {
	next http.Handler
	mu   sync.Mutex
	seen map[string]int
}

func counting(next http.Handler) *counter { return &counter{next: next, seen: map[string]int{}} }

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.seen[r.Method+" "+r.URL.Path]++
	c.mu.Unlock()
	c.next.ServeHTTP(w, r)
}

// count is how many requests came for method and path.
func (c *counter) count(method, path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[method+" "+path]
}

// total is how many requests came to anything but the API's version check.
func (c *counter) total() int {
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

// image is a random image whose configuration runs entrypoint and cmd on
// platform (OS/ARCH[/VARIANT]).
func image(t *testing.T, platform string, entrypoint, cmd []string) v1.Image {
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

// index is a multi-platform index of imgs, each with its configuration's
// platform in the index.
func index(t *testing.T, imgs ...v1.Image) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cf.Platform()}})
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

// push writes img or index to ref, through transport tr (nil: the
// default), and gives its digest.
func push(t *testing.T, ref string, what any, tr http.RoundTripper) v1.Hash {
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

// configDigest is the digest of img's configuration blob.
func configDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	m, err := img.Manifest()
	require.NoError(t, err)
	return m.Config.Digest
}

// resolver is a Resolver with the options o and no entrypoints file but
// the one o names.
func resolver(t *testing.T, o Options) *Resolver {
	t.Helper()
	r, err := New(o)
	require.NoError(t, err)
	return r
}

// dockerConfig makes a Docker config directory holding config, and points
// DOCKER_CONFIG at it for the test, as docker login would leave it.
func dockerConfig(t *testing.T, config map[string]any) {
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

// closedPort is a loopback host:port on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
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
		reg = quietRegistry()
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

// world serves all registries from one loopback server behind a counter,
// and gives the transport that reaches them.
func world(t *testing.T) (*counter, http.RoundTripper) {
	t.Helper()
	c := counting(&hosts{})
	return c, redirect{addr: serve(t, c)}
}

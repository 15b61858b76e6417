package imageconfig

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// DefaultPlatform is the platform whose manifest is read from an index
// when Options.Platform is empty.
const DefaultPlatform = "linux/amd64"

// The bounds of one fetch (SPEC: 10 s, a configuration of at most 1 MiB).
// A manifest or index may be 4 MiB: the OCI distribution spec has clients
// and registries "expect to be able to support manifest pushes of at least
// 4 megabytes", and one of that size is already thousands of platforms.
const (
	fetchTimeout = 10 * time.Second
	maxConfig    = 1 << 20
	maxManifest  = 4 << 20
)

// Options are one run's settings.
type Options struct {
	// Platform picks the manifest from a multi-platform index:
	// OS/ARCH[/VARIANT] (--platform); "" is DefaultPlatform.
	Platform string
	// File is the entrypoints file (--entrypoints), which answers before
	// any registry; "" is none.
	File string
	// NoRegistry contacts no registry (--registry=false): an image not in
	// File is an error.
	NoRegistry bool
	// Transport carries the requests to registries; nil is the registry
	// client's own, which takes a proxy from $HTTPS_PROXY. A caller that
	// serves registries itself (a mirror, a test's in-process registry)
	// gives its own.
	Transport http.RoundTripper
}

// Resolver finds images' commands for one run, and remembers each answer,
// failures too, for the rest of the run. It is safe for concurrent use.
type Resolver struct {
	platform v1.Platform
	file     Entrypoints
	fileName string
	registry bool
	keychain authn.Keychain

	// What one fetch may take; fields, so that a test reaches each bound
	// without waiting 10 s or sending megabytes.
	transport   http.RoundTripper
	timeout     time.Duration
	maxConfig   int64
	maxManifest int64

	mu      sync.Mutex
	fetches map[string]*fetch
}

// fetch is one image's answer, shared by every caller that asks for it.
type fetch struct {
	done chan struct{} // closed once config and err are set
	cfg  Config
	err  *Error
}

// New is the Resolver of a run with the settings o: it reads the
// entrypoints file and checks the platform, so that a mistake in either
// stops the run before any manifest is read.
func New(o Options) (*Resolver, error) {
	spec := o.Platform
	if spec == "" {
		spec = DefaultPlatform
	}
	p, err := v1.ParsePlatform(spec)
	if err != nil || p.OS == "" || p.Architecture == "" || p.OSVersion != "" {
		return nil, fmt.Errorf("--platform %q: want OS/ARCH or OS/ARCH/VARIANT, such as linux/amd64 or linux/arm/v7", o.Platform)
	}
	r := &Resolver{
		platform:    *p,
		registry:    !o.NoRegistry,
		keychain:    authn.DefaultKeychain,
		transport:   o.Transport,
		timeout:     fetchTimeout,
		maxConfig:   maxConfig,
		maxManifest: maxManifest,
		fetches:     map[string]*fetch{},
	}
	if r.transport == nil {
		r.transport = remote.DefaultTransport
	}
	if o.File != "" {
		if r.file, err = ReadEntrypoints(o.File); err != nil {
			return nil, err
		}
		r.fileName = o.File
	}
	return r, nil
}

// Resolve is the Config of image, a reference as a container's image
// field holds it: from the entrypoints file when it has the image, else
// from the image's registry, fetched at most once per Resolver. A failure
// is an *Error.
func (r *Resolver) Resolve(ctx context.Context, image string) (Config, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return Config{}, &Error{Image: image, Reason: Invalid, Detail: "not an image reference (" + err.Error() + ")",
			Fix: "write the container's image as REGISTRY/REPOSITORY:TAG or @sha256:DIGEST"}
	}
	if c, ok := r.file[ref.Name()]; ok {
		return c, nil
	}
	if !r.registry {
		e := &Error{Image: image, Reason: NotInFile, Detail: "no registry is asked (--registry=false)",
			Fix: "add its entrypoint and cmd to an --entrypoints file, or let the registry be asked"}
		if r.fileName != "" {
			e.Detail = "it is not in " + r.fileName + " and no registry is asked (--registry=false)"
			e.Fix = "add its entrypoint and cmd to " + r.fileName + " (crane config " + image + " shows them), or let the registry be asked"
		}
		return Config{}, e
	}
	f, first := r.claim(ref.Name())
	if first {
		f.cfg, f.err = r.fetch(ctx, image, ref)
		close(f.done)
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return Config{}, &Error{Image: image, Reason: TimedOut, Detail: "the run stopped waiting for it (" + ctx.Err().Error() + ")",
			Fix: "try again, " + fromFile(image)}
	}
	if f.err != nil {
		e := *f.err
		e.Image = image // as this caller spelt it
		return Config{}, &e
	}
	return f.cfg, nil
}

// claim is the fetch of the reference full, and whether the caller is the
// first to ask for it, and so makes it.
func (r *Resolver) claim(full string) (*fetch, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.fetches[full]; ok {
		return f, false
	}
	f := &fetch{done: make(chan struct{})}
	r.fetches[full] = f
	return f, true
}

// fetch reads ref's configuration from its registry within the bounds.
func (r *Resolver) fetch(ctx context.Context, image string, ref name.Reference) (Config, *Error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	reg := ref.Context().RegistryStr()
	auth, ac, err := r.credentials(ctx, ref.Context())
	hide := newSecrets(ac)
	if err != nil {
		if ctx.Err() != nil {
			return Config{}, classify(image, reg, err, ctx, false, false, hide)
		}
		return Config{}, &Error{Image: image, Reason: Unauthorized,
			Detail: "reading the credentials for " + reg + " from the Docker config failed: " + hide.scrub(err.Error()),
			Fix:    "fix $DOCKER_CONFIG/config.json or the credential helper it names for " + reg + ", " + fromFile(image)}
	}
	tr := &bounded{next: r.transport, limit: max(r.maxManifest, r.maxConfig)}
	c, err := r.read(image, ref, remote.WithContext(ctx), remote.WithAuth(auth), remote.WithTransport(tr),
		remote.WithPlatform(r.platform), remote.WithUserAgent("proxy-awaitctl"),
		// Not 429: a second's wait does not lift a pull limit.
		remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout))
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return Config{}, e
		}
		return Config{}, classify(image, reg, err, ctx, tr.hit.Load(), *ac != (authn.AuthConfig{}), hide)
	}
	return c, nil
}

// credentials are what the keychain gives for repo, as docker and crane
// find them; a credential helper that hangs is given up on with ctx.
func (r *Resolver) credentials(ctx context.Context, repo name.Repository) (authn.Authenticator, *authn.AuthConfig, error) {
	type answer struct {
		auth authn.Authenticator
		ac   *authn.AuthConfig
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		a, err := authn.Resolve(ctx, r.keychain, repo)
		if err != nil {
			ch <- answer{err: err}
			return
		}
		ac, err := authn.Authorization(ctx, a)
		ch <- answer{a, ac, err}
	}()
	select {
	case a := <-ch:
		if a.ac == nil {
			a.ac = &authn.AuthConfig{}
		}
		return a.auth, a.ac, a.err
	case <-ctx.Done():
		return nil, &authn.AuthConfig{}, ctx.Err()
	}
}

// read is ref's configuration: its manifest, or the manifest of the
// platform from its index, then the configuration that manifest names.
func (r *Resolver) read(image string, ref name.Reference, opts ...remote.Option) (Config, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return Config{}, err
	}
	img, digest, err := r.pick(image, desc)
	if err != nil {
		return Config{}, err
	}
	m, err := img.Manifest()
	if err != nil {
		return Config{}, err
	}
	if m.Config.Size > r.maxConfig {
		return Config{}, &Error{Image: image, Reason: TooLarge,
			Detail: fmt.Sprintf("its configuration is %d bytes, past the %d that are read", m.Config.Size, r.maxConfig),
			Fix:    "check that the reference names the container's image, " + fromFile(image)}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Config{}, err
	}
	return Config{Image: ref.Name(), Entrypoint: cf.Config.Entrypoint, Cmd: cf.Config.Cmd, Digest: digest.String()}, nil
}

// pick is the image that desc names for the platform, and the digest of
// its manifest.
func (r *Resolver) pick(image string, desc *remote.Descriptor) (v1.Image, v1.Hash, error) {
	mt := desc.MediaType
	if !mt.IsIndex() && !mt.IsImage() {
		// A registry that serves no Content-Type: the manifest says.
		if m, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest)); err == nil && m.MediaType != "" {
			mt = m.MediaType
		}
	}
	switch {
	case mt.IsImage():
		img, err := desc.Image()
		return img, desc.Digest, err
	case !mt.IsIndex():
		return nil, v1.Hash{}, &Error{Image: image, Reason: Invalid, Detail: fmt.Sprintf("its manifest is %q, no container image", mt),
			Fix: "check the container's image, " + fromFile(image)}
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, v1.Hash{}, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, v1.Hash{}, err
	}
	var has []string
	for _, m := range im.Manifests {
		if m.Platform == nil || m.Platform.OS == "unknown" { // attestations
			continue
		}
		if m.Platform.Satisfies(r.platform) && (m.MediaType.IsImage() || m.MediaType == "") {
			img, err := idx.Image(m.Digest)
			return img, m.Digest, err
		}
		has = append(has, m.Platform.String())
	}
	return nil, v1.Hash{}, &Error{Image: image, Reason: NoPlatform,
		Detail: fmt.Sprintf("its index has no image for %s, only for %s", r.platform, cmp.Or(strings.Join(has, ", "), "no platform")),
		Fix:    "set --platform to the platform of the nodes that run it"}
}

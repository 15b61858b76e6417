package imageconfig

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/internal/registrytest"
)

// requireReason fails unless err is an *Error of reason, and gives it.
func requireReason(t *testing.T, err error, reason Reason) *Error {
	t.Helper()
	require.Error(t, err)
	e, ok := err.(*Error)
	require.True(t, ok, "want an *Error, got %T: %v", err, err)
	require.Equal(t, reason, e.Reason, "error: %v", err)
	return e
}

// An image's ENTRYPOINT and CMD come from its configuration in a plain
// registry, with the digest of the manifest they were read from.
func TestResolveReadsTheConfiguration(t *testing.T) {
	reg := registrytest.Serve(t, registrytest.Registry())
	img := registrytest.Image(t, "linux/amd64", []string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"})
	digest := registrytest.Push(t, reg+"/web/nginx:1.27", img, nil)

	c, err := resolver(t, Options{}).Resolve(t.Context(), reg+"/web/nginx:1.27")
	require.NoError(t, err)
	assert.Equal(t, Config{Image: reg + "/web/nginx:1.27", Entrypoint: []string{"/docker-entrypoint.sh"},
		Cmd: []string{"nginx", "-g", "daemon off;"}, Digest: digest.String()}, c)
}

// A reference by digest reads that manifest, also when a tag stands
// before the digest (the tag is then only a comment, as for the runtime).
func TestResolveByDigest(t *testing.T) {
	reg := registrytest.Serve(t, registrytest.Registry())
	old := registrytest.Image(t, "linux/amd64", []string{"/app"}, []string{"--old"})
	oldDigest := registrytest.Push(t, reg+"/app:1", old, nil)
	registrytest.Push(t, reg+"/app:1", registrytest.Image(t, "linux/amd64", []string{"/app"}, []string{"--new"}), nil) // the tag moves on

	r := resolver(t, Options{})
	for _, ref := range []string{reg + "/app@" + oldDigest.String(), reg + "/app:1@" + oldDigest.String()} {
		c, err := r.Resolve(t.Context(), ref)
		require.NoError(t, err, ref)
		assert.Equal(t, []string{"--old"}, c.Cmd, ref)
		assert.Equal(t, oldDigest.String(), c.Digest, ref)
	}
	c, err := r.Resolve(t.Context(), reg+"/app:1")
	require.NoError(t, err)
	assert.Equal(t, []string{"--new"}, c.Cmd)

	missing := "sha256:" + strings.Repeat("0", 64)
	_, err = r.Resolve(t.Context(), reg+"/app@"+missing)
	requireReason(t, err, NotFound)
}

// From a multi-platform index, the manifest of --platform is read; a
// platform the index lacks is an error that lists those it has.
func TestResolvePicksThePlatform(t *testing.T) {
	reg := registrytest.Serve(t, registrytest.Registry())
	amd := registrytest.Image(t, "linux/amd64", []string{"/app-amd64"}, nil)
	arm := registrytest.Image(t, "linux/arm64/v8", []string{"/app-arm64"}, nil)
	registrytest.Push(t, reg+"/app:multi", registrytest.Index(t, amd, arm), nil)
	amdDigest, err := amd.Digest()
	require.NoError(t, err)
	armDigest, err := arm.Digest()
	require.NoError(t, err)

	for _, tc := range []struct {
		platform   string
		entrypoint string
		digest     string
	}{
		{"", "/app-amd64", amdDigest.String()},
		{"linux/amd64", "/app-amd64", amdDigest.String()},
		{"linux/arm64", "/app-arm64", armDigest.String()},
		{"linux/arm64/v8", "/app-arm64", armDigest.String()},
	} {
		c, err := resolver(t, Options{Platform: tc.platform}).Resolve(t.Context(), reg+"/app:multi")
		require.NoError(t, err, tc.platform)
		assert.Equal(t, []string{tc.entrypoint}, c.Entrypoint, tc.platform)
		assert.Equal(t, tc.digest, c.Digest, tc.platform)
	}

	_, err = resolver(t, Options{Platform: "linux/s390x"}).Resolve(t.Context(), reg+"/app:multi")
	e := requireReason(t, err, NoPlatform)
	assert.Equal(t, reg+"/app:multi: its index has no image for linux/s390x, only for linux/amd64, linux/arm64/v8: "+
		"set --platform to the platform of the nodes that run it", e.Error())
}

// Each image is fetched once per run, however many pods name it, however
// it is spelt, and whether or not it was found.
func TestResolveFetchesEachImageOnce(t *testing.T) {
	c, tr := registrytest.World(t)
	img := registrytest.Image(t, "linux/amd64", []string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"})
	registrytest.Push(t, "docker.io/library/nginx:1.27", registrytest.Index(t, img), tr)
	before := c.Total()

	r := resolver(t, Options{Transport: tr})
	spellings := []string{"nginx:1.27", "docker.io/library/nginx:1.27", "index.docker.io/library/nginx:1.27", "library/nginx:1.27"}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			got, err := r.Resolve(t.Context(), spellings[i%len(spellings)])
			assert.NoError(t, err)
			assert.Equal(t, []string{"/docker-entrypoint.sh"}, got.Entrypoint)
			_, err = r.Resolve(t.Context(), "nginx:0.0-missing")
			assert.Error(t, err)
		})
	}
	wg.Wait()
	imgDigest, err := img.Digest()
	require.NoError(t, err)
	assert.Equal(t, 1, c.Count("GET", "/v2/library/nginx/manifests/1.27"), "the index")
	assert.Equal(t, 1, c.Count("GET", "/v2/library/nginx/manifests/"+imgDigest.String()), "the platform's manifest")
	assert.Equal(t, 1, c.Count("GET", "/v2/library/nginx/blobs/"+registrytest.ConfigDigest(t, img).String()), "the configuration")
	assert.Equal(t, 1, c.Count("GET", "/v2/library/nginx/manifests/0.0-missing"), "the missing tag")
	assert.Equal(t, 4, c.Total()-before, "nothing else")
}

// The entrypoints file answers before any registry, for the reference in
// any spelling; --registry=false asks none, and an image not in the file
// is then an error naming the file and the fix.
func TestEntrypointsFileAnswersFirst(t *testing.T) {
	c, tr := registrytest.World(t)
	registrytest.Push(t, "docker.io/library/nginx:1.27", registrytest.Image(t, "linux/amd64", []string{"/from-registry"}, nil), tr)
	registrytest.Push(t, "quay.io/org/tool:2", registrytest.Image(t, "linux/amd64", []string{"/tool"}, nil), tr)
	before := c.Total()
	file := writeFile(t, "entrypoints.yaml", "nginx:1.27:\n  entrypoint: [/docker-entrypoint.sh]\n  cmd: [nginx, -g, daemon off;]\n")

	for _, offline := range []bool{false, true} {
		r := resolver(t, Options{File: file, NoRegistry: offline})
		r.transport = tr
		for _, ref := range []string{"nginx:1.27", "docker.io/library/nginx:1.27", "index.docker.io/library/nginx:1.27"} {
			got, err := r.Resolve(t.Context(), ref)
			require.NoError(t, err, ref)
			assert.Equal(t, Config{Image: "index.docker.io/library/nginx:1.27", Entrypoint: []string{"/docker-entrypoint.sh"},
				Cmd: []string{"nginx", "-g", "daemon off;"}}, got, ref)
		}
		got, err := r.Resolve(t.Context(), "quay.io/org/tool:2")
		if offline {
			e := requireReason(t, err, NotInFile)
			assert.Equal(t, "quay.io/org/tool:2: it is not in "+file+" and no registry is asked (--registry=false): add its entrypoint and cmd to "+
				file+" (crane config quay.io/org/tool:2 shows them), or let the registry be asked", e.Error())
		} else {
			require.NoError(t, err)
			assert.Equal(t, []string{"/tool"}, got.Entrypoint)
		}
	}
	assert.Equal(t, 2, c.Total()-before, "the registry was asked for quay.io/org/tool:2 alone, once: its manifest and configuration")

	_, err := resolver(t, Options{NoRegistry: true}).Resolve(t.Context(), "nginx:1.27")
	e := requireReason(t, err, NotInFile)
	assert.Equal(t, "nginx:1.27: no registry is asked (--registry=false): add its entrypoint and cmd to an --entrypoints file, or let the registry be asked", e.Error())
}

// A registry that wants credentials is read with those of the Docker
// config, as docker and crane find them: an auths entry, a credential
// helper for the registry, the default credential store. Without them, or
// with wrong ones, the error says which and gives docker login; no error
// shows a credential.
func TestResolveAuthenticatesAsDockerDoes(t *testing.T) {
	backend := registrytest.Registry()
	pushTo := registrytest.Serve(t, backend)
	reg := registrytest.Serve(t, registrytest.BasicAuth(backend, "ci-bot", "s3cr3t-pa55word"))
	registrytest.Push(t, pushTo+"/private/app:1", registrytest.Image(t, "linux/amd64", []string{"/app"}, []string{"serve"}), nil)
	ref := reg + "/private/app:1"
	auth := func(user, password string) string {
		return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	}
	secrets := []string{"s3cr3t-pa55word", "wrong-pa55word", auth("ci-bot", "s3cr3t-pa55word"), auth("ci-bot", "wrong-pa55word")}

	for _, tc := range []struct {
		name   string
		config map[string]any
		helper string // the password the credential helper gives
		want   Reason // 0: found
		text   string
	}{
		{name: "an auths entry", config: map[string]any{"auths": map[string]any{reg: map[string]string{"auth": auth("ci-bot", "s3cr3t-pa55word")}}}},
		{name: "a credential helper for the registry", config: map[string]any{"credHelpers": map[string]string{reg: helperName}}, helper: "s3cr3t-pa55word"},
		{name: "the credential store", config: map[string]any{"credsStore": helperName}, helper: "s3cr3t-pa55word"},
		{name: "no credentials", config: map[string]any{}, want: Unauthorized,
			text: ref + ": registry " + reg + " wants credentials and the Docker config has none for it (401 Unauthorized): log in with docker login " + reg},
		{name: "a wrong password in auths", config: map[string]any{"auths": map[string]any{reg: map[string]string{"auth": auth("ci-bot", "wrong-pa55word")}}}, want: Unauthorized,
			text: ref + ": registry " + reg + " refused the credentials the Docker config gives for it (401 Unauthorized): log in again with docker login " + reg},
		{name: "a wrong password from the helper", config: map[string]any{"credHelpers": map[string]string{reg: helperName}}, helper: "wrong-pa55word", want: Unauthorized,
			text: ref + ": registry " + reg + " refused the credentials the Docker config gives for it (401 Unauthorized)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registrytest.DockerConfig(t, tc.config)
			t.Setenv(helperServerEnv, reg)
			t.Setenv(helperUserEnv, "ci-bot")
			t.Setenv(helperSecretEnv, tc.helper)
			c, err := resolver(t, Options{}).Resolve(t.Context(), ref)
			if tc.want == 0 {
				require.NoError(t, err)
				assert.Equal(t, []string{"/app"}, c.Entrypoint)
				return
			}
			e := requireReason(t, err, tc.want)
			assert.True(t, strings.HasPrefix(e.Error(), tc.text), "got %q", e.Error())
			for _, s := range secrets {
				assert.NotContains(t, e.Error(), s)
			}
		})
	}
}

// What a registry says back is shown without the credentials that were
// sent to it, and a URL it names without its password.
func TestErrorsShowNoCredential(t *testing.T) {
	backend := registrytest.Registry()
	pushTo := registrytest.Serve(t, backend)
	registrytest.Push(t, pushTo+"/app:1", registrytest.Image(t, "linux/amd64", []string{"/app"}, nil), nil)
	// A registry that refuses with a status nothing retries, quoting the
	// request's Authorization header; and one that sends the configuration
	// to a store whose URL holds a password, where nothing listens.
	quoting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			backend.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
			"code": "DENIED", "message": "refused " + r.Header.Get("Authorization"), "detail": r.Header.Get("Authorization")}}})
	})
	store := closedPort(t)
	redirecting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/blobs/") {
			http.Redirect(w, r, "http://store-user:st0re-pa55word@"+store+"/blob", http.StatusTemporaryRedirect)
			return
		}
		backend.ServeHTTP(w, r)
	})
	for _, tc := range []struct {
		name   string
		h      http.Handler
		reason Reason
	}{
		{"an answer that quotes the credentials", quoting, Failed},
		{"a redirect to a URL with a password", redirecting, Unreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registrytest.Serve(t, tc.h)
			registrytest.DockerConfig(t, map[string]any{"auths": map[string]any{reg: map[string]string{"username": "ci-bot", "password": "s3cr3t-pa55word"}}})
			_, err := resolver(t, Options{}).Resolve(t.Context(), reg+"/app:1")
			e := requireReason(t, err, tc.reason)
			for _, s := range []string{"s3cr3t-pa55word", base64.StdEncoding.EncodeToString([]byte("ci-bot:s3cr3t-pa55word")), "st0re-pa55word"} {
				assert.NotContains(t, e.Error(), s)
			}
			assert.Contains(t, e.Error(), "xxxxx", "the error says that something was hidden")
		})
	}
}

// Each fetch is bounded in time: a registry that does not answer is given
// up on at the bound, with a time-out error that names the fix.
func TestResolveTimesOut(t *testing.T) {
	backend := registrytest.Registry()
	pushTo := registrytest.Serve(t, backend)
	registrytest.Push(t, pushTo+"/app:1", registrytest.Image(t, "linux/amd64", []string{"/app"}, nil), nil)
	// The manifest comes 5 s late: long after the bound, short enough that
	// a fetch without one ends, and the test fails rather than hangs.
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Second):
			}
		}
		backend.ServeHTTP(w, r)
	})
	reg := registrytest.Serve(t, slow)
	r := resolver(t, Options{})
	r.timeout = 200 * time.Millisecond
	start := time.Now()
	_, err := r.Resolve(t.Context(), reg+"/app:1")
	e := requireReason(t, err, TimedOut)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Equal(t, reg+"/app:1: registry "+reg+" did not answer in time: check the network to it and try again, "+fromFile(reg+"/app:1"), e.Error())
}

// A configuration past 1 MiB is refused before it is read.
func TestResolveRefusesALargeConfiguration(t *testing.T) {
	c := registrytest.Counting(registrytest.Registry())
	reg := registrytest.Serve(t, c)
	img := registrytest.Image(t, "linux/amd64", []string{"/app"}, []string{strings.Repeat("x", maxConfig)})
	registrytest.Push(t, reg+"/app:big", img, nil)
	m, err := img.Manifest()
	require.NoError(t, err)
	require.Greater(t, m.Config.Size, int64(maxConfig))

	_, err = resolver(t, Options{}).Resolve(t.Context(), reg+"/app:big")
	e := requireReason(t, err, TooLarge)
	assert.Equal(t, fmt.Sprintf("%s/app:big: its configuration is %d bytes, past the %d that are read: check that the reference names the container's image, %s",
		reg, m.Config.Size, maxConfig, fromFile(reg+"/app:big")), e.Error())
	assert.Zero(t, c.Count("GET", "/v2/app/blobs/"+m.Config.Digest.String()), "the configuration was not read")
}

// A manifest or index past its bound is refused, whether the registry
// says its length first or streams it without end.
func TestResolveRefusesALargeManifest(t *testing.T) {
	backend := registrytest.Registry()
	reg := registrytest.Serve(t, backend)
	registrytest.Push(t, reg+"/app:1", registrytest.Image(t, "linux/amd64", []string{"/app"}, nil), nil)
	endless := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/manifests/") {
			backend.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
		chunk := []byte(strings.Repeat(" ", 32<<10))
		for range 64 { // 2 MiB, in chunks: no Content-Length
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	for _, tc := range []struct {
		name string
		reg  string
	}{
		{"with its length", reg},
		{"streamed", registrytest.Serve(t, endless)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := resolver(t, Options{})
			r.maxManifest, r.maxConfig = 256, 256 // the pushed manifest is about 400 bytes
			_, err := r.Resolve(t.Context(), tc.reg+"/app:1")
			e := requireReason(t, err, TooLarge)
			assert.Equal(t, tc.reg+"/app:1: an answer of registry "+tc.reg+" was past the bound of what is read: check that the reference names a container image, "+fromFile(tc.reg+"/app:1"), e.Error())
		})
	}
}

// What cannot be read says why, and the fix.
func TestResolveSaysWhatIsMissing(t *testing.T) {
	reg := registrytest.Serve(t, registrytest.Registry())
	registrytest.Push(t, reg+"/app:1", registrytest.Image(t, "linux/amd64", []string{"/app"}, nil), nil)
	down := closedPort(t)
	for _, tc := range []struct {
		ref    string
		reason Reason
		text   string
	}{
		{reg + "/app:2", NotFound, reg + "/app:2: registry " + reg + " has no such image (404 Not Found): check the image's name and tag, " + fromFile(reg+"/app:2")},
		{reg + "/other:1", NotFound, reg + "/other:1: registry " + reg + " has no such image (404 Not Found): check the image's name and tag, " + fromFile(reg+"/other:1")},
		{down + "/app:1", Unreachable, down + "/app:1: registry " + down + " is not reachable: "},
		{"Not An Image", Invalid, "Not An Image: not an image reference ("},
	} {
		_, err := resolver(t, Options{}).Resolve(t.Context(), tc.ref)
		e := requireReason(t, err, tc.reason)
		assert.True(t, strings.HasPrefix(e.Error(), tc.text), "got %q", e.Error())
	}
}

// References are known in full, so that every spelling of one image finds
// the same entry and the same fetch.
func TestReferencesAreKnownInFull(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct{ ref, full string }{
		{"nginx", "index.docker.io/library/nginx:latest"},
		{"nginx:1.27", "index.docker.io/library/nginx:1.27"},
		{"docker.io/library/nginx:1.27", "index.docker.io/library/nginx:1.27"},
		{"library/nginx:1.27", "index.docker.io/library/nginx:1.27"},
		{"bitnami/redis:7.2", "index.docker.io/bitnami/redis:7.2"},
		{"nginx@" + digest, "index.docker.io/library/nginx@" + digest},
		{"nginx:1.27@" + digest, "index.docker.io/library/nginx@" + digest},
		{"gcr.io/google-samples/microservices-demo/frontend:v0.10.3", "gcr.io/google-samples/microservices-demo/frontend:v0.10.3"},
		{"localhost:5000/app", "localhost:5000/app:latest"},
	} {
		ref, err := name.ParseReference(tc.ref)
		require.NoError(t, err, tc.ref)
		assert.Equal(t, tc.full, ref.Name(), tc.ref)
	}
}

func TestNewRefusesAPlatformItCannotRead(t *testing.T) {
	for _, p := range []string{"linux", "linux/", "/amd64", "a/b/c/d", "windows/amd64:10.0"} {
		_, err := New(Options{Platform: p})
		assert.EqualError(t, err, fmt.Sprintf("--platform %q: want OS/ARCH or OS/ARCH/VARIANT, such as linux/amd64 or linux/arm/v7", p))
	}
}

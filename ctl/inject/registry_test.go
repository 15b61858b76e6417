package inject

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/proxy-await/proxy-await/ctl/imageconfig"
	"github.com/proxy-await/proxy-await/internal/registrytest"
)

// events are the lines of r whose event is event, as written.
func events(r *collected, event string) []string {
	var out []string
	for _, l := range r.Lines {
		if l.Event == event {
			out = append(out, l.String())
		}
	}
	return out
}

// podSpec is what the tests read back of a written pod template.
type podSpec struct {
	Metadata struct {
		Annotations map[string]string
	}
	Spec struct {
		Containers []struct {
			Name    string
			Command []string
			Args    []string
		}
	}
}

// written decodes the pod templates of an injection's output, by the
// name of the object that holds them (a Pod, or a workload's template).
func written(t *testing.T, out []byte) map[string]podSpec {
	t.Helper()
	pods := map[string]podSpec{}
	dec := yaml.NewDecoder(strings.NewReader(string(out)))
	for {
		var obj struct {
			Kind     string
			Metadata struct{ Name string }
			Spec     struct{ Template podSpec }
		}
		var node yaml.Node
		if dec.Decode(&node) != nil {
			return pods
		}
		require.NoError(t, node.Decode(&obj))
		if obj.Kind == "Pod" {
			var p podSpec
			require.NoError(t, node.Decode(&p))
			pods[obj.Metadata.Name] = p
			continue
		}
		pods[obj.Metadata.Name] = obj.Spec.Template
	}
}

// container is the container called name of a written pod.
func container(t *testing.T, p podSpec, name string) (command, args []string) {
	t.Helper()
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return c.Command, c.Args
		}
	}
	t.Fatalf("no container %s", name)
	return nil, nil
}

// A container that sets no command gets its image's, from the image's
// registry, served here by go-containerregistry's registry over real HTTP:
// the manifest of --platform from a multi-platform index, an image named
// by its digest, and the digest read in the pod's annotation. An image
// the registry does not have is a line with the reason and the fix, and
// the container is written as it was.
func TestInjectReadsTheRegistry(t *testing.T) {
	c, tr := registrytest.World(t)
	amd := registrytest.Image(t, "linux/amd64", []string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"})
	arm := registrytest.Image(t, "linux/arm64", []string{"/docker-entrypoint.sh", "--arm"}, []string{"nginx"})
	registrytest.Push(t, "registry.example.com/shop/web:1", registrytest.Index(t, arm, amd), tr)
	api := registrytest.Image(t, "linux/amd64", []string{"/api"}, nil)
	apiDigest := registrytest.Push(t, "registry.example.com/shop/api:2", api, tr)

	dir := t.TempDir()
	path := filepath.Join(dir, "shop.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata:
      annotations: {linkerd.io/inject: enabled}
    spec:
      containers:
        - name: web
          image: registry.example.com/shop/web:1
          ports: [{containerPort: 80}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    metadata:
      annotations: {linkerd.io/inject: enabled}
    spec:
      restartPolicy: OnFailure
      containers:
        - name: migrate
          image: registry.example.com/shop/api@`+apiDigest.String()+`
          args: [migrate, --to, latest]
        - name: report
          image: registry.example.com/shop/missing:1
`), 0o644))

	for _, tc := range []struct {
		platform string
		web      []string // the command web gets after proxy-await's --
		webArgs  []string
		digest   string
	}{
		{"", []string{"/docker-entrypoint.sh"}, []string{"nginx", "-g", "daemon off;"}, registrytest.Digest(t, amd).String()},
		{"linux/arm64", []string{"/docker-entrypoint.sh", "--arm"}, []string{"nginx"}, registrytest.Digest(t, arm).String()},
	} {
		t.Run("platform "+tc.platform, func(t *testing.T) {
			res, err := imageconfig.New(imageconfig.Options{Platform: tc.platform, Transport: tr})
			require.NoError(t, err)
			before := c.Total()
			r := run(t.Context(), []string{path}, Options{Images: res, Image: "registry.example.com/proxy-await:1"})
			pods := written(t, r.Output)

			cmd, args := container(t, pods["web"], "web")
			require.Contains(t, cmd, "--")
			assert.Equal(t, "/proxy-await/proxy-await", cmd[0])
			assert.Equal(t, tc.web, cmd[len(cmd)-len(tc.web):], "the image's ENTRYPOINT, after proxy-await's --")
			assert.Equal(t, tc.webArgs, args, "the image's CMD, written out")
			assert.Equal(t, tc.digest, pods["web"].Metadata.Annotations["proxy-await.io/entrypoint.web"])

			cmd, args = container(t, pods["migrate"], "migrate")
			assert.Equal(t, []string{"--", "/api"}, cmd[len(cmd)-2:], "the ENTRYPOINT of the image at its digest")
			assert.Contains(t, cmd, "-S", "a Job with a classic sidecar")
			assert.Equal(t, []string{"migrate", "--to", "latest"}, args, "the container's own args, as they were")
			assert.Equal(t, apiDigest.String(), pods["migrate"].Metadata.Annotations["proxy-await.io/entrypoint.migrate"])

			cmd, args = container(t, pods["migrate"], "report")
			assert.Nil(t, cmd, "not found: written as it was")
			assert.Nil(t, args)
			skips := events(r, "skipped")
			require.Len(t, skips, 1)
			assert.Equal(t, path+":27: skipped: Job/migrate container report: it sets no command, and what its image runs was not found: "+
				"registry.example.com/shop/missing:1: registry registry.example.com has no such image (404 Not Found): check the image's name and tag, "+
				"or give its entrypoint and cmd in an --entrypoints file (crane config registry.example.com/shop/missing:1 shows them where the registry can be reached)",
				skips[0])
			assert.True(t, r.Failed, "a container that needs proxy-await is left without it")
			assert.Equal(t, 2, r.Adopted)
			// web's index, its platform's manifest and configuration; api's
			// manifest and configuration; the missing tag.
			assert.Equal(t, 6, c.Total()-before, "each image read once")
		})
	}
}

// A --container that names no application container of the input is a
// usage error that writes nothing, and is known before any registry is
// asked, even for the containers the other names pick: nothing is read for
// a run that writes nothing.
func TestUnknownContainerAsksNoRegistry(t *testing.T) {
	c, tr := registrytest.World(t)
	registrytest.Push(t, "registry.example.com/shop/web:1", registrytest.Image(t, "linux/amd64", []string{"/web"}, nil), tr)
	path := filepath.Join(t.TempDir(), "web.yaml")
	require.NoError(t, os.WriteFile(path, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n    - name: web\n      image: registry.example.com/shop/web:1\n      ports: [{containerPort: 8080}]\n"), 0o644))
	res, err := imageconfig.New(imageconfig.Options{Transport: tr})
	require.NoError(t, err)

	before := c.Total()
	r := run(t.Context(), []string{path}, Options{Images: res, Image: "registry.example.com/proxy-await:1", Containers: []string{"web", "wbe"}})
	assert.Equal(t, []string{"wbe"}, r.Unknown)
	assert.Empty(t, r.Output)
	assert.Empty(t, r.Lines)
	assert.Zero(t, c.Total()-before, "requests to the registry")

	r = run(t.Context(), []string{path}, Options{Images: res, Image: "registry.example.com/proxy-await:1", Containers: []string{"web"}})
	assert.Empty(t, r.Unknown)
	assert.Equal(t, 1, r.Adopted)
	assert.Equal(t, 2, c.Total()-before, "its manifest and its configuration")
}

// A private registry is read with the Docker config's credentials, as
// docker and crane read it; without them the container is skipped with a
// line that says to log in, and no line shows a credential.
func TestInjectReadsAPrivateRegistry(t *testing.T) {
	backend := registrytest.Registry()
	pushTo := registrytest.Serve(t, backend)
	reg := registrytest.Serve(t, registrytest.BasicAuth(backend, "ci-bot", "s3cr3t-pa55word"))
	registrytest.Push(t, pushTo+"/private/app:1", registrytest.Image(t, "linux/amd64", []string{"/app"}, []string{"serve"}), nil)
	path := filepath.Join(t.TempDir(), "pod.yaml")
	require.NoError(t, os.WriteFile(path, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec:\n  containers:\n    - name: app\n      image: "+reg+"/private/app:1\n      ports: [{containerPort: 8080}]\n"), 0o644))
	auth := base64.StdEncoding.EncodeToString([]byte("ci-bot:s3cr3t-pa55word"))

	for _, tc := range []struct {
		name   string
		config map[string]any
		want   string // the line, "" for none
	}{
		{"logged in", map[string]any{"auths": map[string]any{reg: map[string]string{"auth": auth}}}, ""},
		{"not logged in", map[string]any{}, path + ":6: skipped: Pod/app container app: it sets no command, and what its image runs was not found: " +
			reg + "/private/app:1: registry " + reg + " wants credentials and the Docker config has none for it (401 Unauthorized): log in with docker login " + reg},
		{"a wrong password", map[string]any{"auths": map[string]any{reg: map[string]string{"username": "ci-bot", "password": "wrong-pa55word"}}},
			path + ":6: skipped: Pod/app container app: it sets no command, and what its image runs was not found: " +
				reg + "/private/app:1: registry " + reg + " refused the credentials the Docker config gives for it (401 Unauthorized): log in again with docker login " + reg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registrytest.DockerConfig(t, tc.config)
			res, err := imageconfig.New(imageconfig.Options{})
			require.NoError(t, err)
			r := run(t.Context(), []string{path}, Options{Images: res, Image: "registry.example.com/proxy-await:1"})
			if tc.want == "" {
				assert.Empty(t, events(r, "skipped"))
				cmd, args := container(t, written(t, r.Output)["app"], "app")
				assert.Equal(t, "/app", cmd[len(cmd)-1])
				assert.Equal(t, []string{"serve"}, args)
				return
			}
			skips := events(r, "skipped")
			require.Len(t, skips, 1)
			assert.True(t, strings.HasPrefix(skips[0], tc.want), "got %s", skips[0])
			for _, secret := range []string{"s3cr3t-pa55word", "wrong-pa55word", auth} {
				assert.NotContains(t, skips[0], secret)
			}
			assert.NotContains(t, string(r.Output), "/proxy-await/proxy-await", "the container is written as it was")
		})
	}
}

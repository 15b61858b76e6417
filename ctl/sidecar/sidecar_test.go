package sidecar

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/proxy-await/proxy-await/ctl/manifest"
	"github.com/proxy-await/proxy-await/proxies"
)

// pod is a pod template with containers and the pod's own labels and
// annotations, all with one key.
func pod(meta map[string]string, containers ...*manifest.Container) *manifest.Pod {
	p := &manifest.Pod{File: "pod.yaml", Kind: "Pod", Name: "p", Containers: containers}
	for k, v := range meta {
		p.Annotations = append(p.Annotations, manifest.MetaEntry{Key: k, Value: manifest.Scalar{Text: v}})
		p.Labels = append(p.Labels, manifest.MetaEntry{Key: k, Value: manifest.Scalar{Text: v}})
	}
	for _, c := range containers {
		c.Vars = &manifest.Variables{}
	}
	return p
}

func runsNothing(*manifest.Container) bool { return false }

// Every proxy of the table is found in a pod as its facts say: a
// container of each of its images, whatever the registry and tag, and
// the pod its injection key asks its injector for.
func TestEveryProxyIsFound(t *testing.T) {
	for _, px := range proxies.InPods {
		for _, img := range px.Images {
			image := "registry.example.com/" + strings.TrimPrefix(img, "/") + ":1.2.3"
			c := &manifest.Container{Name: "sidecar", Image: image}
			assert.Same(t, px, ProxyOf(c), "%s: %s", px.Name, image)
			found := Find(pod(nil, &manifest.Container{Name: "app", Image: "registry.example.com/app:1"}, c), Cluster{}, runsNothing)
			require.Len(t, found.Sidecars, 1, "%s: %s", px.Name, image)
			assert.Same(t, px, found.Sidecars[0].Proxy)
			assert.Equal(t, "container sidecar", found.Sidecars[0].From)
		}
		if in := px.Inject; in.Key != "" {
			found := Find(pod(map[string]string{in.Key: in.On[0]}), Cluster{}, runsNothing)
			require.Len(t, found.Sidecars, 1, "%s: %s: %s", px.Name, in.Key, in.On[0])
			assert.Same(t, px, found.Sidecars[0].Proxy)
			assert.Equal(t, fmt.Sprintf("%s: %q", in.Key, in.On[0]), found.Sidecars[0].From)
		}
		if off := px.Inject.Off; len(off) > 0 {
			found := Find(pod(map[string]string{px.Inject.Key: off[0]}), Cluster{}, runsNothing)
			assert.Empty(t, found.Sidecars, "%s: %s: %s", px.Name, px.Inject.Key, off[0])
		}
	}
}

// Each label and annotation that a proxy reads is known, and a near miss
// of it (a letter dropped or doubled) is named with the right spelling.
func TestNearMissOfEveryKey(t *testing.T) {
	for _, px := range proxies.InPods {
		for _, key := range px.Keys() {
			assert.Empty(t, NearMiss(key), key)
			if len(key) < 9 {
				continue
			}
			for _, miss := range []string{key[:len(key)-1], key + key[len(key)-1:], strings.ToUpper(key)} {
				assert.Equal(t, key, NearMiss(miss), "%s for %s", miss, key)
			}
		}
	}
}

// An init container that a proxy's injector adds to set up the pod's
// network runs the proxy's image but is no sidecar; the same name as a
// native sidecar, or as an application's container, is what its image
// says.
func TestSetUpContainersAreNoSidecars(t *testing.T) {
	n := 0
	for _, px := range proxies.InPods {
		for _, img := range px.Images {
			image := "registry.example.com/" + strings.TrimPrefix(img, "/") + ":1.2.3"
			for _, name := range px.SetUp() {
				n++
				assert.Nil(t, ProxyOf(&manifest.Container{Name: name, Image: image, Init: true}), "%s: %s", px.Name, name)
				assert.Same(t, px, ProxyOf(&manifest.Container{Name: name, Image: image, Init: true, RestartAlways: true}), "%s: %s", px.Name, name)
				assert.Same(t, px, ProxyOf(&manifest.Container{Name: name, Image: image}), "%s: %s", px.Name, name)
			}
		}
	}
	assert.NotZero(t, n, "no injector of the table adds such a container")
}

// An init container that is no native sidecar runs to its end before the
// next one starts, and the application after all of them: whatever its
// image and name, it runs beside nothing, and is no sidecar (Envoy
// validating a configuration, a proxy's binary copied out).
func TestInitContainersThatEndAreNoSidecars(t *testing.T) {
	for _, px := range proxies.InPods {
		for _, img := range px.Images {
			image := "registry.example.com/" + strings.TrimPrefix(img, "/") + ":1.2.3"
			for _, name := range append([]string{"validate-config"}, px.Containers...) {
				assert.True(t, ProxyOf(&manifest.Container{Name: name, Image: image, Init: true}) == nil, "%s: %s", px.Name, name)
				assert.Same(t, px, ProxyOf(&manifest.Container{Name: name, Image: image, Init: true, RestartAlways: true}), "%s: %s", px.Name, name)
			}
		}
	}
}

package main

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// 15. Adoption of the manifests teams have, whose containers set no
// command: a Deployment whose app runs its image's ENTRYPOINT and CMD, and
// a Job whose app runs its image's ENTRYPOINT with args of its own, their
// images in the cluster's registry (testdata/registry, over TLS with the
// run's CA), from which the nodes pull them. proxy-awaitctl inject reads
// each image's configuration from that registry, as it would from any
// (its own CA trusted as a system one, no credentials), and writes the
// command the container ran out behind proxy-await, its install container
// from proxy-await's image in the same registry; the Deployment serves
// and rolls out under load with no request failed, the Job completes with
// one shutdown POST after its app, and each pod runs the very image whose
// configuration inject read, by digest.
func fromRegistry(k *kube, registry string) (string, error) {
	const ns = "s15"
	if err := k.namespace(ns, nil); err != nil {
		return "", err
	}
	reg, err := newRegistryClient(registry, filepath.Join(k.run, "pki", "ca.crt"))
	if err != nil {
		return "", err
	}
	// proxy-awaitctl asks the registry as on a machine that trusts its CA
	// and holds no credentials: an empty Docker config, no proxy.
	docker := filepath.Join(k.run, "out", ns, "docker")
	if err := os.MkdirAll(docker, 0o755); err != nil {
		return "", err
	}
	in := injector{
		ctl:   filepath.Join(k.run, "bin", "proxy-awaitctl"),
		image: registry + "/e2e/proxy-await:e2e",
		args:  []string{"--platform", "linux/" + runtime.GOARCH},
		env: []string{"SSL_CERT_FILE=" + reg.caFile, "DOCKER_CONFIG=" + docker, "REGISTRY_AUTH_FILE=", "XDG_RUNTIME_DIR=",
			"HTTPS_PROXY=", "https_proxy=", "HTTP_PROXY=", "http_proxy=", "ALL_PROXY=", "all_proxy="},
	}
	install, err := reg.image("e2e/proxy-await", "e2e")
	if err != nil {
		return "", err
	}

	// The Deployment: httpapp's image, its ENTRYPOINT and CMD serving on
	// 8080; no command, no args.
	web, err := reg.image("e2e/httpapp", "e2e")
	if err != nil {
		return "", err
	}
	serving, _, err := k.injectedDeployment(in, ns, ctr{Image: registry + "/e2e/httpapp:e2e", Pull: corev1.PullIfNotPresent},
		func(tpl corev1.PodTemplateSpec) error {
			return ranAsImage(tpl, "app", web, web.Entrypoint, web.Cmd)
		})
	if err != nil {
		return "", fmt.Errorf("the Deployment: %w", err)
	}
	pods, err := k.api.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: "app=" + rolloutApp})
	if err != nil {
		return "", err
	}
	if err := runImages(pods.Items, registry, map[string]registryImage{"app": web, "proxy-await-install": install}); err != nil {
		return "", err
	}

	// The Job: busybox's image, whose ENTRYPOINT is /bin/sh, with the
	// script as its args; no command.
	box, err := reg.image("e2e/busybox", "e2e")
	if err != nil {
		return "", err
	}
	script := jobScript(0)[1:] // sh's arguments: -c SCRIPT
	done, _, err := k.injectedJob(in, ns, ctr{Image: registry + "/e2e/busybox:e2e", Pull: corev1.PullIfNotPresent, Args: script},
		func(tpl corev1.PodTemplateSpec) error {
			return ranAsImage(tpl, "app", box, box.Entrypoint, script)
		})
	if err != nil {
		return "", fmt.Errorf("the Job: %w", err)
	}
	jobPods, err := k.api.CoreV1().Pods(ns).List(bg, metav1.ListOptions{LabelSelector: "job-name=migrate"})
	if err != nil {
		return "", err
	}
	if err := runImages(jobPods.Items, registry, map[string]registryImage{"app": box, "proxy-await-install": install}); err != nil {
		return "", err
	}
	return fmt.Sprintf("from %s (TLS, the run's CA): a Deployment with neither command nor args (the image's entrypoint %q, cmd %q) %s; a Job with args only (entrypoint %q): Complete, %s; every pod ran the images inject read, by digest (app %s, %s; install %s)",
		registry, web.Entrypoint, web.Cmd, serving, box.Entrypoint, done, short(web.Digest), short(box.Digest), short(install.Digest)), nil
}

// ranAsImage says whether container name of tpl, as inject wrote it, runs
// what the container ran before, as the runtime gave it img's
// configuration: proxy-await, its flags, --, then img's ENTRYPOINT with
// args (the container's own, or the image's CMD written out); and whether
// the pod's annotation records the digest of the manifest the
// configuration came from.
func ranAsImage(tpl corev1.PodTemplateSpec, name string, img registryImage, entrypoint, args []string) error {
	i := slices.IndexFunc(tpl.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		return fmt.Errorf("inject wrote no container %s", name)
	}
	c := tpl.Spec.Containers[i]
	end := slices.Index(c.Command, "--")
	if len(c.Command) == 0 || c.Command[0] != "/proxy-await/proxy-await" || end < 0 {
		return fmt.Errorf("container %s: inject wrote command %q, want /proxy-await/proxy-await FLAGS... -- ENTRYPOINT...", c.Name, c.Command)
	}
	ran := append(slices.Clone(c.Command[end+1:]), c.Args...)
	want := append(slices.Clone(entrypoint), args...)
	if !slices.Equal(ran, want) {
		return fmt.Errorf("container %s: proxy-await runs %q, want %q (the image's entrypoint %q, then %q)", c.Name, ran, want, entrypoint, args)
	}
	key := "proxy-await.io/entrypoint." + c.Name
	if !strings.Contains(tpl.Annotations[key], img.Digest) {
		return fmt.Errorf("container %s: annotation %s is %q, want the digest %s of the manifest its command came from", c.Name, key, tpl.Annotations[key], img.Digest)
	}
	return nil
}

// runImages says whether each container of pods named in want runs the
// image want gives it, as the node's containerd pulled it: the pod's
// status names it by the registry's digest.
func runImages(pods []corev1.Pod, registry string, want map[string]registryImage) error {
	if len(pods) == 0 {
		return fmt.Errorf("no pod to check the images of")
	}
	for _, p := range pods {
		seen := 0
		for _, st := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			img, ok := want[st.Name]
			if !ok {
				continue
			}
			seen++
			if ref := registry + "/" + img.Repository + "@" + img.Digest; st.ImageID != ref {
				return fmt.Errorf("%s: container %s runs %q, want %q, the image whose configuration inject read", p.Name, st.Name, st.ImageID, ref)
			}
		}
		if seen != len(want) {
			return fmt.Errorf("%s: %d of the containers %v have a status", p.Name, seen, slices.Sorted(maps.Keys(want)))
		}
	}
	return nil
}

// short is a digest's first hex digits.
func short(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	return d[:min(12, len(d))]
}

// registryClient reads images from the cluster's registry itself, over the
// distribution API, apart from proxy-awaitctl: what the registry holds is
// what inject's output is checked against.
type registryClient struct {
	host   string
	caFile string
	http   *http.Client
}

// registryImage is an image as the registry holds it: the digest of its
// manifest (or of its index), and the ENTRYPOINT and CMD of its
// configuration (of the index's first manifest).
type registryImage struct {
	Repository string
	Digest     string
	Entrypoint []string
	Cmd        []string
}

func newRegistryClient(host, caFile string) (*registryClient, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no certificate", caFile)
	}
	return &registryClient{host: host, caFile: caFile, http: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}}, nil
}

const (
	mediaOCIIndex     = "application/vnd.oci.image.index.v1+json"
	mediaOCIManifest  = "application/vnd.oci.image.manifest.v1+json"
	mediaDockerList   = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaDockerSchema = "application/vnd.docker.distribution.manifest.v2+json"
)

// image reads repository:tag's manifest (an index's first manifest) and
// its configuration.
func (r *registryClient) image(repository, tag string) (registryImage, error) {
	img := registryImage{Repository: repository}
	body, err := r.get("/v2/"+repository+"/manifests/"+tag, mediaOCIIndex, mediaOCIManifest, mediaDockerList, mediaDockerSchema)
	if err != nil {
		return img, err
	}
	img.Digest = fmt.Sprintf("sha256:%x", sha256.Sum256(body))
	var m struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Digest string `json:"digest"`
		} `json:"manifests"`
		Config struct {
			Digest string `json:"digest"`
		} `json:"config"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return img, fmt.Errorf("%s:%s: its manifest: %v", repository, tag, err)
	}
	if len(m.Manifests) > 0 {
		if body, err = r.get("/v2/"+repository+"/manifests/"+m.Manifests[0].Digest, mediaOCIManifest, mediaDockerSchema); err != nil {
			return img, err
		}
		if err := json.Unmarshal(body, &m); err != nil {
			return img, fmt.Errorf("%s:%s: its platform's manifest: %v", repository, tag, err)
		}
	}
	if m.Config.Digest == "" {
		return img, fmt.Errorf("%s:%s: a manifest without a configuration", repository, tag)
	}
	body, err = r.get("/v2/" + repository + "/blobs/" + m.Config.Digest)
	if err != nil {
		return img, err
	}
	var cf struct {
		Config struct {
			Entrypoint []string `json:"Entrypoint"`
			Cmd        []string `json:"Cmd"`
		} `json:"config"`
	}
	if err := json.Unmarshal(body, &cf); err != nil {
		return img, fmt.Errorf("%s:%s: its configuration: %v", repository, tag, err)
	}
	img.Entrypoint, img.Cmd = cf.Config.Entrypoint, cf.Config.Cmd
	return img, nil
}

func (r *registryClient) get(path string, accept ...string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, "https://"+r.host+path, nil)
	if err != nil {
		return nil, err
	}
	if len(accept) > 0 {
		req.Header.Set("Accept", strings.Join(accept, ", "))
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", req.URL, resp.Status, body)
	}
	return body, nil
}

// Command registry is the container registry of `make e2e`'s cluster:
// go-containerregistry's registry (the distribution API, blobs in memory)
// over TLS, holding the images it is given, which the nodes' containerd
// pulls and `proxy-awaitctl inject` reads the ENTRYPOINT and CMD of.
//
//	registry -addr IP:PORT -cert FILE -key FILE -ca FILE [-ready FILE] REPOSITORY:TAG=PATH...
//
// PATH is a docker-archive tarball (as e2e/cmd/mkimage writes) or an OCI
// image layout (as scripts/ociimage writes; its index, multi-platform, is
// pushed whole). Once it serves, it pushes each image to itself through
// its own address as any client would, trusting -ca, prints each
// reference's digest ("IP:PORT/REPOSITORY:TAG sha256:..."), writes the same
// lines to -ready, and serves until SIGTERM or SIGINT.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "", "the address to serve on, IP:PORT")
	cert := flag.String("cert", "", "the serving certificate (PEM)")
	key := flag.String("key", "", "its key (PEM)")
	ca := flag.String("ca", "", "the CA that signed -cert, which the pushes trust")
	ready := flag.String("ready", "", "a file to write the pushed references and digests to, once all are served")
	flag.Parse()
	if *addr == "" || *cert == "" || *key == "" || *ca == "" || flag.NArg() == 0 {
		return errors.New("usage: registry -addr IP:PORT -cert FILE -key FILE -ca FILE [-ready FILE] REPOSITORY:TAG=PATH...")
	}
	pair, err := tls.LoadX509KeyPair(*cert, *key)
	if err != nil {
		return err
	}
	roots, err := pool(*ca)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(os.Stderr, "registry: ", log.Lmicroseconds))),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()

	tr := remote.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	var lines []string
	for _, arg := range flag.Args() {
		repoTag, path, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want REPOSITORY:TAG=PATH", arg)
		}
		ref, err := name.NewTag(*addr + "/" + repoTag)
		if err != nil {
			return err
		}
		d, err := push(ref, path, remote.WithTransport(tr))
		if err != nil {
			return fmt.Errorf("pushing %s to %s: %w", path, ref, err)
		}
		lines = append(lines, ref.String()+" "+d.String())
	}
	out := strings.Join(lines, "\n") + "\n"
	fmt.Print(out)
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte(out), 0o644); err != nil {
			return err
		}
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-served:
		return err
	case <-stop:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	}
}

// push writes the image or the index at path to ref, and gives the digest
// of what it wrote: a directory is an OCI layout, whose index's one entry
// (an image or a multi-platform index) is pushed; a file is a
// docker-archive tarball.
func push(ref name.Tag, path string, opts ...remote.Option) (v1.Hash, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return v1.Hash{}, err
	}
	if !fi.IsDir() {
		img, err := tarball.ImageFromPath(path, nil)
		if err != nil {
			return v1.Hash{}, err
		}
		if err := remote.Write(ref, img, opts...); err != nil {
			return v1.Hash{}, err
		}
		return img.Digest()
	}
	top, err := layout.ImageIndexFromPath(path)
	if err != nil {
		return v1.Hash{}, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	if len(m.Manifests) != 1 {
		return v1.Hash{}, fmt.Errorf("the layout's index names %d manifests, want 1", len(m.Manifests))
	}
	desc := m.Manifests[0]
	if desc.MediaType.IsIndex() {
		idx, err := top.ImageIndex(desc.Digest)
		if err != nil {
			return v1.Hash{}, err
		}
		return desc.Digest, remote.WriteIndex(ref, idx, opts...)
	}
	img, err := top.Image(desc.Digest)
	if err != nil {
		return v1.Hash{}, err
	}
	return desc.Digest, remote.Write(ref, img, opts...)
}

// pool is the certificate pool of the PEM file ca.
func pool(ca string) (*x509.CertPool, error) {
	data, err := os.ReadFile(ca)
	if err != nil {
		return nil, err
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: no PEM certificate", ca)
	}
	return p, nil
}

//go:build linux

package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// tlsResult is what an https:// readiness URL costs a start: the CPU time
// of proxy-await's whole run (a wait for a proxy that is ready, then
// /bin/true) with an http:// URL, and with an https:// one whose
// certificate it trusts, for an RSA and an ECDSA key. The difference from
// the same build's http:// run is the TLS client's: reading the trusted
// certificate, the handshake (TLS 1.3, Go's default key exchange) and the
// verification of the server's certificate.
type tlsResult struct {
	Runs int      `json:"runs"`
	Rows []tlsRow `json:"rows"`
}

type tlsRow struct {
	Name    string  `json:"name"`     // the build and the URL
	CPU     stats   `json:"cpu"`      // the whole run's user+system time, µs
	AddedUS float64 `json:"added_us"` // the median over the same build's http:// median
}

const tlsRuns = 40

func tlsCost() (any, error) {
	dir, err := os.MkdirTemp(p.out, "tls")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// Only the certificate written here is trusted: SSL_CERT_FILE names
	// it, and SSL_CERT_DIR an empty directory, so that what the system
	// trusts is not read.
	roots := filepath.Join(dir, "roots")
	if err := os.Mkdir(roots, 0o755); err != nil {
		return nil, err
	}
	type server struct{ name, url string }
	plain, err := serveReady(nil)
	if err != nil {
		return nil, err
	}
	defer plain.Close()
	servers := []server{{"http://", "http://" + plain.Addr().String() + "/ready"}}
	var pems []byte
	for _, k := range []struct {
		name string
		key  func() (crypto.Signer, error)
	}{
		{"https://, RSA 2048", func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 2048) }},
		{"https://, ECDSA P-256", func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }},
	} {
		key, err := k.key()
		if err != nil {
			return nil, err
		}
		cert, der, err := selfSigned(key)
		if err != nil {
			return nil, err
		}
		pems = append(pems, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
		ln, err := serveReady(&tls.Config{Certificates: []tls.Certificate{cert}})
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		servers = append(servers, server{k.name, "https://" + ln.Addr().String() + "/ready"})
	}
	certFile := filepath.Join(dir, "trusted.pem")
	if err := os.WriteFile(certFile, pems, 0o644); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "SSL_CERT_FILE="+certFile, "SSL_CERT_DIR="+roots)

	res := tlsResult{Runs: tlsRuns}
	for _, b := range proxyAwaits() {
		cpu := make([][]time.Duration, len(servers))
		for range tlsRuns {
			for i, s := range servers {
				cmd := exec.Command(b.Path, "-q", "--ready-url", s.url, "--", "/bin/true")
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					return nil, fmt.Errorf("%s, %s: %v: %s", b.Name, s.name, err, out)
				}
				cpu[i] = append(cpu[i], rusageCPU(cmd.ProcessState))
			}
		}
		var base float64
		for i, s := range servers {
			row := tlsRow{Name: b.Name + ", " + s.name, CPU: summarise(cpu[i])}
			if i == 0 {
				base = row.CPU.Median
			}
			row.AddedUS = row.CPU.Median - base
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}

// serveReady serves 200 on every path on a loopback port, with TLS when
// cfg is not nil.
func serveReady(cfg *tls.Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	srv := &http.Server{
		Handler:  http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() { _ = srv.Serve(ln) }()
	return ln, nil
}

// selfSigned is a certificate for 127.0.0.1 signed by key itself.
func selfSigned(key crypto.Signer) (tls.Certificate, []byte, error) {
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, der, nil
}

// Command pki writes the certificates, keys and kubeconfigs of the end-to-end
// cluster into a directory: one CA, the API server's serving certificate, a
// client certificate for each component and for the admin, each node's
// kubelet's client and serving certificates, and the service-account
// signing key, and the serving certificate of the cluster's registry. Every key is ECDSA P-256, made here (crypto/x509), so nothing
// is downloaded and no openssl is needed. The files are valid for a day: a
// run lasts minutes.
//
//	pki -dir DIR -api-ip IP -service-ip IP -registry-ip IP -node NAME=IP [-node NAME=IP]...
//
// It writes DIR/ca.crt, DIR/NAME.crt and DIR/NAME.key for apiserver, registry,
// apiserver-kubelet-client and each client, kubelet-NODE and
// kubelet-serving-NODE for each node, DIR/sa.key and DIR/sa.pub, and
// DIR/NAME.kubeconfig for admin, controller-manager, scheduler, kube-proxy
// and each node's kubelet (kubelet-NODE), all pointing at
// https://API-IP:6443.
package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// apiPort is the API server's secure port, on the node address.
const apiPort = 6443

type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
}

// client is a component that authenticates with a client certificate: its
// user name and groups are the certificate's CN and O, which the API
// server's default RBAC roles and Node authorizer know.
type client struct {
	file  string
	cn    string
	orgs  []string
	write bool // also write NAME.kubeconfig
}

// node is a node of the cluster: its name and the address its kubelet
// serves on.
type node struct {
	name string
	ip   net.IP
}

func main() {
	dir := flag.String("dir", "", "directory to write into")
	apiIP := flag.String("api-ip", "", "the API server's address")
	serviceIP := flag.String("service-ip", "", "the first address of the Service range (the kubernetes Service)")
	registryIP := flag.String("registry-ip", "", "the registry's address")
	var nodes []node
	flag.Func("node", "a node as NAME=IP, its kubelet's address (repeatable)", func(v string) error {
		name, addr, _ := strings.Cut(v, "=")
		ip := net.ParseIP(addr)
		if name == "" || ip == nil {
			return fmt.Errorf("want NAME=IP, not %q", v)
		}
		nodes = append(nodes, node{name, ip})
		return nil
	})
	flag.Parse()
	ip, svc, reg := net.ParseIP(*apiIP), net.ParseIP(*serviceIP), net.ParseIP(*registryIP)
	if *dir == "" || len(nodes) == 0 || ip == nil || svc == nil || reg == nil {
		fmt.Fprintln(os.Stderr, "usage: pki -dir DIR -api-ip IP -service-ip IP -registry-ip IP -node NAME=IP [-node NAME=IP]...")
		os.Exit(2)
	}
	if err := write(*dir, ip, svc, reg, nodes); err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

func write(dir string, apiIP, serviceIP, registryIP net.IP, nodes []node) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	p := &pki{dir: dir}
	if err := p.makeCA(); err != nil {
		return err
	}
	loopback := net.ParseIP("127.0.0.1")
	// The API server answers on its node's address, on loopback, and as the
	// kubernetes Service, by address and by name.
	if err := p.issue("apiserver", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{apiIP, loopback, serviceIP},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}); err != nil {
		return err
	}
	// The registry answers on its address: the nodes' containerd and
	// proxy-awaitctl reach it by it, and trust it through the CA.
	if err := p.issue("registry", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "registry"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{registryIP},
	}); err != nil {
		return err
	}
	clients := []client{
		{"admin", "e2e-admin", []string{"system:masters"}, true},
		{"controller-manager", "system:kube-controller-manager", nil, true},
		{"scheduler", "system:kube-scheduler", nil, true},
		{"kube-proxy", "system:kube-proxy", nil, true},
		// For logs and exec: the API server calling the kubelets.
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, false},
	}
	// Each kubelet serves on its node's address, and is a client as the
	// node, which the Node authorizer knows by this name.
	for _, n := range nodes {
		if err := p.issue("kubelet-serving-"+n.name, &x509.Certificate{
			Subject:     pkix.Name{CommonName: "system:node:" + n.name, Organization: []string{"system:nodes"}},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			IPAddresses: []net.IP{n.ip, loopback},
			DNSNames:    []string{n.name},
		}); err != nil {
			return err
		}
		clients = append(clients, client{"kubelet-" + n.name, "system:node:" + n.name, []string{"system:nodes"}, true})
	}
	server := fmt.Sprintf("https://%s", net.JoinHostPort(apiIP.String(), fmt.Sprint(apiPort)))
	for _, c := range clients {
		if err := p.issue(c.file, &x509.Certificate{
			Subject:     pkix.Name{CommonName: c.cn, Organization: c.orgs},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}); err != nil {
			return err
		}
		if c.write {
			if err := p.kubeconfig(c.file, c.cn, server); err != nil {
				return err
			}
		}
	}
	return p.serviceAccountKey()
}

func (p *pki) makeCA() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "proxy-await-e2e-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return err
	}
	if p.caCert, err = x509.ParseCertificate(der); err != nil {
		return err
	}
	p.caKey = key
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(p.dir, "ca.crt"), p.caPEM, 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(p.dir, "ca.key"), key)
}

// issue signs a new key's certificate with the CA and writes NAME.crt and
// NAME.key.
func (p *pki) issue(name string, tmpl *x509.Certificate) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return err
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(p.dir, name+".crt"), crt, 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(p.dir, name+".key"), key)
}

// kubeconfig writes NAME.kubeconfig with the CA and NAME's certificate and
// key inline, so that it works from any directory.
func (p *pki) kubeconfig(name, user, server string) error {
	crt, err := os.ReadFile(filepath.Join(p.dir, name+".crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(filepath.Join(p.dir, name+".key"))
	if err != nil {
		return err
	}
	b64 := base64.StdEncoding.EncodeToString
	conf := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: %q}
current-context: e2e
`, server, b64(p.caPEM), user, b64(crt), b64(key), user)
	return os.WriteFile(filepath.Join(p.dir, name+".kubeconfig"), []byte(conf), 0o600)
}

// serviceAccountKey writes the key the API server signs service-account
// tokens with (sa.key), and its public half (sa.pub) that verifies them.
func (p *pki) serviceAccountKey() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(p.dir, "sa.key"), key); err != nil {
		return err
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err)
	}
	return n
}

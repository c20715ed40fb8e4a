package main

// Everything the API server needs to authenticate itself and its clients,
// kept in DIR/pki so that a restart with the same --dir serves the same CA,
// certificate and token, and an existing kubeconfig keeps working.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type pki struct {
	dir       string // DIR/pki
	caCert    []byte // PEM
	token     string // bearer token of a system:masters user (cluster-admin)
	tokenFile string // --token-auth-file
	certFile  string // serving certificate, signed by the CA
	keyFile   string
	caFile    string
	saKeyFile string // signs and verifies service account tokens
}

// loadOrCreatePKI reuses DIR/pki when it exists and creates it otherwise.
func loadOrCreatePKI(dir string) (*pki, error) {
	p := &pki{
		dir:       dir,
		tokenFile: filepath.Join(dir, "tokens.csv"),
		certFile:  filepath.Join(dir, "apiserver.crt"),
		keyFile:   filepath.Join(dir, "apiserver.key"),
		caFile:    filepath.Join(dir, "ca.crt"),
		saKeyFile: filepath.Join(dir, "sa.key"),
	}
	// tokens.csv is written last, so its presence means the set is complete.
	if _, err := os.Stat(p.tokenFile); errors.Is(err, os.ErrNotExist) {
		if err := p.create(); err != nil {
			return nil, err
		}
	}
	var err error
	if p.caCert, err = os.ReadFile(p.caFile); err != nil {
		return nil, err
	}
	line, err := os.ReadFile(p.tokenFile)
	if err != nil {
		return nil, err
	}
	p.token, _, _ = strings.Cut(string(line), ",")
	return p, nil
}

func (p *pki) create() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	// Ten years: test data directories may be kept around for a long time.
	notAfter := time.Now().Add(10 * 365 * 24 * time.Hour)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "nodehook-testcluster-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return err
	}
	ca, _ := x509.ParseCertificate(caDER)

	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// 10.0.0.1 is the in-cluster "kubernetes" service (first IP of
		// --service-cluster-ip-range); clients here use 127.0.0.1.
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, srvKey.Public(), caKey)
	if err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return err
	}

	files := []struct {
		path string
		data []byte
	}{
		{filepath.Join(p.dir, "ca.key"), keyPEM(caKey)},
		{p.caFile, certPEM(caDER)},
		{p.keyFile, keyPEM(srvKey)},
		{p.certFile, certPEM(srvDER)},
		{p.saKeyFile, keyPEM(saKey)},
		// Static token file format: token,user,uid,"group,...".
		// system:masters is bound to cluster-admin by the bootstrap policy.
		{p.tokenFile, []byte(hex.EncodeToString(tok) + ",nodehook-admin,nodehook-admin,\"system:masters\"\n")},
	}
	for _, f := range files {
		if err := writeFileAtomic(f.path, f.data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// keyPEM uses the SEC 1 "EC PRIVATE KEY" form: --service-account-key-file
// derives public keys from it, but not from PKCS #8.
func keyPEM(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // only fails for unsupported curves
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// writeKubeconfig writes a block-style kubeconfig that C++ code can read
// with a very small YAML subset: plain or double-quoted scalars only.
func (p *pki) writeKubeconfig(path, server string) error {
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: nodehook-testcluster
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: nodehook-admin
  user:
    token: %s
contexts:
- name: nodehook-testcluster
  context:
    cluster: nodehook-testcluster
    user: nodehook-admin
current-context: nodehook-testcluster
`, server, base64.StdEncoding.EncodeToString(p.caCert), p.token)
	return writeFileAtomic(path, []byte(kc), 0o600)
}

// writeFileAtomic makes sure readers never see a half-written file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

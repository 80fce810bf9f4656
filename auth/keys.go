package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
)

// minHMACKey is the shortest accepted HMAC secret, as in Hasura.
const minHMACKey = 32

// minRSABits is the smallest accepted RSA modulus.
const minRSABits = 2048

// parseKey parses the configured key for algorithm alg. HMAC secrets are used as
// is; asymmetric keys are PEM public keys (PKIX or PKCS#1) or certificates.
func parseKey(alg, key string) (any, error) {
	if slices.Contains(hmacAlgs, alg) {
		if len(key) < minHMACKey {
			return nil, fmt.Errorf("an %s secret must be at least %d characters", alg, minHMACKey)
		}
		return []byte(key), nil
	}
	pub, err := parsePublicKeyPEM(key)
	if err != nil {
		return nil, err
	}
	if err := keyMatchesAlg(alg, pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// parsePublicKeyPEM reads the first PEM block of s.
func parsePublicKeyPEM(s string) (any, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("not a PEM block (want a public key or a certificate)")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("bad PUBLIC KEY: %v", err)
		}
		return k, nil
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("bad RSA PUBLIC KEY: %v", err)
		}
		return k, nil
	case "CERTIFICATE":
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("bad CERTIFICATE: %v", err)
		}
		return cert.PublicKey, nil
	}
	return nil, fmt.Errorf("PEM block %q is not a public key or a certificate", block.Type)
}

// keyMatchesAlg reports whether key may verify tokens signed with alg: the key
// type must be the algorithm's, and for ECDSA the curve too. It guards both the
// configured key and every key a JWKS serves.
func keyMatchesAlg(alg string, key any) error {
	switch k := key.(type) {
	case []byte:
		if slices.Contains(hmacAlgs, alg) {
			return nil
		}
	case *rsa.PublicKey:
		if slices.Contains(rsaAlgs, alg) {
			if k.N.BitLen() < minRSABits {
				return fmt.Errorf("RSA key is shorter than %d bits", minRSABits)
			}
			return nil
		}
	case *ecdsa.PublicKey:
		if want := ecCurve(alg); want != nil {
			if k.Curve != want {
				return fmt.Errorf("%s needs an EC key on %s", alg, want.Params().Name)
			}
			return nil
		}
	case ed25519.PublicKey:
		if alg == "EdDSA" {
			return nil
		}
	}
	return fmt.Errorf("a %s key cannot verify %s tokens", keyKind(key), alg)
}

func ecCurve(alg string) elliptic.Curve {
	switch alg {
	case "ES256":
		return elliptic.P256()
	case "ES384":
		return elliptic.P384()
	case "ES512":
		return elliptic.P521()
	}
	return nil
}

func keyKind(key any) string {
	switch key.(type) {
	case []byte:
		return "symmetric"
	case *rsa.PublicKey:
		return "RSA"
	case *ecdsa.PublicKey:
		return "ECDSA"
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", key)
}

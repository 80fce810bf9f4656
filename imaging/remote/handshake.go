package remote

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
)

// The handshake that opens every network connection to a listening coffer-imager,
// before any frame: the two sides prove to each other that they hold the shared
// secret, which never crosses the wire.
//
//	worker → server  handshakeMagic, worker nonce (32 bytes)
//	server → worker  server nonce (32), HMAC-SHA256(secret, "server" | worker nonce | server nonce)
//	worker → server  HMAC-SHA256(secret, "worker" | server nonce | worker nonce)
//
// Then the frame protocol starts with the worker's Hello. Every message has a fixed
// size, so a peer that does not know the secret makes the worker read 64 bytes and
// allocate nothing it chose; the worker compares MACs in constant time and closes
// the connection on a mismatch without answering. Fresh nonces on both sides mean a
// recorded handshake cannot be replayed to either. A worker started without a
// secret (--insecure, loopback only) uses the empty key: a server configured with
// a secret then refuses it, and it refuses such a server.
const (
	handshakeMagic = "coffer-imager/1\n"
	nonceSize      = 32
	macSize        = sha256.Size
	challengeSize  = len(handshakeMagic) + nonceSize
	proofSize      = nonceSize + macSize
)

// Errors of the handshake.
var (
	errNotImager = errors.New("handshake: the peer is not a coffer-imager of this protocol")
	errBadProof  = errors.New("handshake: the peer does not know the shared secret")
)

// handshakeMAC is HMAC-SHA256(key, role | a | b).
func handshakeMAC(key []byte, role string, a, b []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(role))
	m.Write(a)
	m.Write(b)
	return m.Sum(nil)
}

// parseChallenge returns the worker's nonce from its first message, errNotImager if
// the message does not start with handshakeMagic.
func parseChallenge(b []byte) ([]byte, error) {
	if len(b) != challengeSize || string(b[:len(handshakeMagic)]) != handshakeMagic {
		return nil, errNotImager
	}
	return b[len(handshakeMagic):], nil
}

// parseProof checks the server's message against the worker nonce it answers and
// returns the server's nonce, errBadProof if the MAC is not that of key.
func parseProof(b, key, workerNonce []byte) ([]byte, error) {
	if len(b) != proofSize {
		return nil, errBadProof
	}
	serverNonce, mac := b[:nonceSize], b[nonceSize:]
	if !hmac.Equal(mac, handshakeMAC(key, "server", workerNonce, serverNonce)) {
		return nil, errBadProof
	}
	return serverNonce, nil
}

// acceptHandshake runs the worker's side over rw, drawing its nonce from rnd. It
// returns nil once the server proved it knows key; the caller closes the
// connection on any error.
func acceptHandshake(rw io.ReadWriter, key []byte, rnd io.Reader) error {
	var challenge [challengeSize]byte
	copy(challenge[:], handshakeMagic)
	workerNonce := challenge[len(handshakeMagic):]
	if _, err := io.ReadFull(rnd, workerNonce); err != nil {
		return fmt.Errorf("handshake: nonce: %w", err)
	}
	if _, err := rw.Write(challenge[:]); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	var proof [proofSize]byte
	if _, err := io.ReadFull(rw, proof[:]); err != nil {
		return fmt.Errorf("handshake: reading the server's proof: %w", err)
	}
	serverNonce, err := parseProof(proof[:], key, workerNonce)
	if err != nil {
		return err
	}
	_, err = rw.Write(handshakeMAC(key, "worker", serverNonce, workerNonce))
	return err
}

// dialHandshake runs the server's side over rw, drawing its nonce from rnd: it
// answers the worker's challenge and checks that the worker knows key too.
func dialHandshake(rw io.ReadWriter, key []byte, rnd io.Reader) error {
	var challenge [challengeSize]byte
	if _, err := io.ReadFull(rw, challenge[:]); err != nil {
		return fmt.Errorf("handshake: reading the worker's challenge: %w", err)
	}
	workerNonce, err := parseChallenge(challenge[:])
	if err != nil {
		return err
	}
	var proof [proofSize]byte
	serverNonce := proof[:nonceSize]
	if _, err := io.ReadFull(rnd, serverNonce); err != nil {
		return fmt.Errorf("handshake: nonce: %w", err)
	}
	copy(proof[nonceSize:], handshakeMAC(key, "server", workerNonce, serverNonce))
	if _, err := rw.Write(proof[:]); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	var mac [macSize]byte
	if _, err := io.ReadFull(rw, mac[:]); err != nil {
		return fmt.Errorf("handshake: the worker refused the secret or closed the connection: %w", err)
	}
	if !hmac.Equal(mac[:], handshakeMAC(key, "worker", serverNonce, workerNonce)) {
		return errBadProof
	}
	return nil
}

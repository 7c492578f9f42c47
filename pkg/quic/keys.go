package quic

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
)

// keys are the client's Initial packet protection keys (RFC 9001 §5):
// the AEAD, the header protection cipher and the IV. Building them
// allocates (the AES key schedules, the GCM): it is done once per
// connection attempt.
type keys struct {
	aead cipher.AEAD
	hp   cipher.Block
	iv   [12]byte
}

// initialSecrets returns the client's Initial secret for a connection
// whose client chose dcid: HKDF-Extract over the version's salt, then
// HKDF-Expand-Label "client in".
func clientInitialSecret(p *versionParams, dcid []byte) []byte {
	initial, err := hkdf.Extract(sha256.New, dcid, p.salt)
	if err != nil {
		panic(err) // SHA-256 takes any input
	}
	return expandLabel(initial, "client in", sha256.Size)
}

// expandLabel is TLS 1.3's HKDF-Expand-Label (RFC 8446 §7.1) with an
// empty context.
func expandLabel(secret []byte, label string, n int) []byte {
	info := make([]byte, 0, 4+6+len(label))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0)
	out, err := hkdf.Expand(sha256.New, secret, string(info), n)
	if err != nil {
		panic(err) // n is at most 32: never too long for SHA-256
	}
	return out
}

// deriveKeys fills k with the client's Initial keys of version p for a
// connection whose client chose dcid.
func deriveKeys(k *keys, p *versionParams, dcid []byte) {
	secret := clientInitialSecret(p, dcid)
	block, err := aes.NewCipher(expandLabel(secret, p.keyLabel, 16))
	if err != nil {
		panic(err) // a 16-byte key is valid
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		panic(err) // AES has a 16-byte block
	}
	if k.hp, err = aes.NewCipher(expandLabel(secret, p.hpLabel, 16)); err != nil {
		panic(err)
	}
	copy(k.iv[:], expandLabel(secret, p.ivLabel, 12))
}

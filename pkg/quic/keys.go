package quic

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"hash"
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

// kdf computes TLS 1.3's HKDF-SHA256 (RFC 5869, RFC 8446 §7.1) for keys
// of at most 64 bytes and outputs of at most 32 (one HMAC block), with one
// hash reused: what deriving a connection's keys needs, without the
// allocations of crypto/hkdf's HMAC per call. The RFC 9001 and RFC 9369
// test vectors check it.
type kdf struct {
	h     hash.Hash
	pad   [sha256.BlockSize]byte
	inner [sha256.Size]byte
	info  [4 + 6 + 255 + 2]byte
}

// mac puts HMAC-SHA256(key, msg) in out; key is at most 64 bytes.
func (d *kdf) mac(out *[sha256.Size]byte, key, msg []byte) {
	if d.h == nil {
		d.h = sha256.New()
	}
	for i := range d.pad {
		d.pad[i] = 0x36
	}
	for i, c := range key {
		d.pad[i] ^= c
	}
	d.h.Reset()
	d.h.Write(d.pad[:])
	d.h.Write(msg)
	d.h.Sum(d.inner[:0])
	for i := range d.pad {
		d.pad[i] ^= 0x36 ^ 0x5c
	}
	d.h.Reset()
	d.h.Write(d.pad[:])
	d.h.Write(d.inner[:])
	d.h.Sum(out[:0])
}

// clientInitialSecret puts in out the client's Initial secret for a
// connection whose client chose dcid: HKDF-Extract over the version's
// salt, then HKDF-Expand-Label "client in".
func (d *kdf) clientInitialSecret(out *[sha256.Size]byte, p *versionParams, dcid []byte) {
	var initial [sha256.Size]byte
	d.mac(&initial, p.salt, dcid)
	d.expandLabel(out, initial[:], "client in", sha256.Size)
}

// expandLabel puts in out[:n] HKDF-Expand-Label(secret, label, "", n),
// n at most 32: the first block of HKDF-Expand.
func (d *kdf) expandLabel(out *[sha256.Size]byte, secret []byte, label string, n int) {
	info := d.info[:0]
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0, 1) // an empty context; the block counter
	d.mac(out, secret, info)
}

// deriveKeys fills k with the client's Initial keys of version p for a
// connection whose client chose dcid.
func (d *kdf) deriveKeys(k *keys, p *versionParams, dcid []byte) {
	var secret, key, hp, iv [sha256.Size]byte
	d.clientInitialSecret(&secret, p, dcid)
	d.expandLabel(&key, secret[:], p.keyLabel, 16)
	d.expandLabel(&hp, secret[:], p.hpLabel, 16)
	d.expandLabel(&iv, secret[:], p.ivLabel, 12)
	block, err := aes.NewCipher(key[:16])
	if err != nil {
		panic(err) // a 16-byte key is valid
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		panic(err) // AES has a 16-byte block
	}
	if k.hp, err = aes.NewCipher(hp[:16]); err != nil {
		panic(err)
	}
	copy(k.iv[:], iv[:12])
}

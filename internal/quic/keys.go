package quic

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding"
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
// allocations of crypto/hkdf's HMAC per call. A key used more than once
// (a version's salt, a connection's secret) has its HMAC pads hashed once
// (hmacKey): each use then hashes two blocks instead of four. The RFC 9001
// and RFC 9369 test vectors and crypto/hkdf check it.
type kdf struct {
	h     hash.Hash
	state sha256State
	pad   [sha256.BlockSize]byte
	inner [sha256.Size]byte
	info  [4 + 6 + 255 + 2]byte
	salts [4]saltKey // the HMAC keys of the versions' salts met so far
	// A connection's secrets and keys while they are derived: here, not
	// on the stack, as the hash's Sum (an interface method) would make
	// them escape.
	initial, client [sha256.Size]byte
	secret          hmacKey
	key, iv, hpKey  [sha256.Size]byte
}

// sha256State is what the standard library's SHA-256 saves and restores
// its state with.
type sha256State interface {
	encoding.BinaryAppender
	encoding.BinaryUnmarshaler
}

// hmacKey is an HMAC-SHA256 key made ready: the hash states after the
// key's inner and outer pads, as sha256State saves them.
type hmacKey struct {
	inner, outer [sha256StateLen]byte
}

// sha256StateLen is the length of a saved SHA-256 state: a 4-byte magic,
// eight 4-byte words, a block, an 8-byte length.
const sha256StateLen = 4 + 8*4 + sha256.BlockSize + 8

type saltKey struct {
	p *versionParams
	k hmacKey
}

func (d *kdf) hash() hash.Hash {
	if d.h == nil {
		d.h = sha256.New()
		d.state = d.h.(sha256State)
	}
	return d.h
}

// mac puts HMAC-SHA256(key, msg) in out; key is at most 64 bytes.
func (d *kdf) mac(out *[sha256.Size]byte, key, msg []byte) {
	h := d.hash()
	d.setPad(key, 0x36)
	h.Reset()
	h.Write(d.pad[:])
	h.Write(msg)
	h.Sum(d.inner[:0])
	d.setPad(key, 0x5c)
	h.Reset()
	h.Write(d.pad[:])
	h.Write(d.inner[:])
	h.Sum(out[:0])
}

// setPad puts in d.pad key, at most 64 bytes, zero-padded, XOR b.
func (d *kdf) setPad(key []byte, b byte) {
	for i := range d.pad {
		d.pad[i] = b
	}
	for i, c := range key {
		d.pad[i] ^= c
	}
}

// prepare makes k the HMAC key key, at most 64 bytes.
func (d *kdf) prepare(k *hmacKey, key []byte) {
	h := d.hash()
	for i, b := range [2]byte{0x36, 0x5c} {
		d.setPad(key, b)
		h.Reset()
		h.Write(d.pad[:])
		state := &k.inner
		if i == 1 {
			state = &k.outer
		}
		if s, err := d.state.AppendBinary(state[:0]); err != nil || len(s) != sha256StateLen {
			panic("quic: SHA-256 state not as expected") // the standard library's: fixed
		}
	}
}

// macKey puts HMAC-SHA256(k, msg) in out.
func (d *kdf) macKey(out *[sha256.Size]byte, k *hmacKey, msg []byte) {
	h := d.hash()
	d.restore(k.inner[:])
	h.Write(msg)
	h.Sum(d.inner[:0])
	d.restore(k.outer[:])
	h.Write(d.inner[:])
	h.Sum(out[:0])
}

func (d *kdf) restore(state []byte) {
	if err := d.state.UnmarshalBinary(state); err != nil {
		panic("quic: SHA-256 state not restored: " + err.Error()) // one prepare saved
	}
}

// saltKey returns the HMAC key of p's salt, prepared on first use.
func (d *kdf) saltKey(p *versionParams) *hmacKey {
	for i := range d.salts {
		switch s := &d.salts[i]; s.p {
		case p:
			return &s.k
		case nil:
			s.p = p
			d.prepare(&s.k, p.salt)
			return &s.k
		}
	}
	panic("quic: more salts than versionParams") // one per versionParams
}

// clientInitialSecret puts in out the client's Initial secret for a
// connection whose client chose dcid: HKDF-Extract over the version's
// salt, then HKDF-Expand-Label "client in".
func (d *kdf) clientInitialSecret(out *[sha256.Size]byte, p *versionParams, dcid []byte) {
	d.macKey(&d.initial, d.saltKey(p), dcid)
	d.expandLabel(out, d.initial[:], "client in", sha256.Size)
}

// expandLabel puts in out[:n] HKDF-Expand-Label(secret, label, "", n),
// n at most 32: the first block of HKDF-Expand.
func (d *kdf) expandLabel(out *[sha256.Size]byte, secret []byte, label string, n int) {
	d.mac(out, secret, d.labelInfo(label, n))
}

// expandLabelKey is expandLabel with the secret made an HMAC key.
func (d *kdf) expandLabelKey(out *[sha256.Size]byte, secret *hmacKey, label string, n int) {
	d.macKey(out, secret, d.labelInfo(label, n))
}

// labelInfo returns HKDF-Expand-Label's info for label, length n and an
// empty context, followed by HKDF-Expand's first block counter.
func (d *kdf) labelInfo(label string, n int) []byte {
	info := d.info[:0]
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	return append(info, 0, 1) // an empty context; the block counter
}

// initialKeys puts in key, iv and hp the client's Initial packet
// protection key (16 bytes), IV (12) and header protection key (16) of
// version p for a connection whose client chose dcid.
func (d *kdf) initialKeys(key, iv, hp *[sha256.Size]byte, p *versionParams, dcid []byte) {
	d.clientInitialSecret(&d.client, p, dcid)
	d.prepare(&d.secret, d.client[:])
	d.expandLabelKey(key, &d.secret, p.keyLabel, 16)
	d.expandLabelKey(iv, &d.secret, p.ivLabel, 12)
	d.expandLabelKey(hp, &d.secret, p.hpLabel, 16)
}

// deriveKeys fills k with the client's Initial keys of version p for a
// connection whose client chose dcid.
func (d *kdf) deriveKeys(k *keys, p *versionParams, dcid []byte) {
	d.initialKeys(&d.key, &d.iv, &d.hpKey, p, dcid)
	block, err := aes.NewCipher(d.key[:16])
	if err != nil {
		panic(err) // a 16-byte key is valid
	}
	if k.aead, err = cipher.NewGCM(block); err != nil {
		panic(err) // AES has a 16-byte block
	}
	if k.hp, err = aes.NewCipher(d.hpKey[:16]); err != nil {
		panic(err)
	}
	copy(k.iv[:], d.iv[:12])
}

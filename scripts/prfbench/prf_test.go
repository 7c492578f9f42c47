package prfbench

import (
	"encoding/binary"
	"testing"

	"github.com/dchest/siphash"
	sip13 "github.com/dgryski/go-sip13"
	"github.com/minio/highwayhash"
)

// url is 55 bytes, the mean URL length of scripts/genurls' bench file.
var url = []byte("http://www.example.com/a/catalog/product/itm?id=1234567")

var (
	key16 = []byte("0123456789abcdef")
	key32 = []byte("0123456789abcdef0123456789abcdef")
	k0    = binary.LittleEndian.Uint64(key16)
	k1    = binary.LittleEndian.Uint64(key16[8:])
)

// prfs are the candidates, each a 64-bit keyed hash of one input.
var prfs = []struct {
	name string
	sum  func(k []byte, p []byte) uint64
}{
	{"siphash-2-4", func(k, p []byte) uint64 {
		return siphash.Hash(binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[8:]), p)
	}},
	{"siphash-1-3", func(k, p []byte) uint64 {
		return sip13.Sum64(binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[8:]), p)
	}},
	{"highwayhash-64", func(k, p []byte) uint64 { return highwayhash.Sum64(p, append(append([]byte(nil), k...), k...)) }},
}

// TestKeyed: each candidate is deterministic, depends on the key and on
// every byte of the input (a PRF that ignored either would be fast for
// the wrong reason), and SipHash-2-4 matches its published test vector.
func TestKeyed(t *testing.T) {
	other := append([]byte(nil), key16...)
	other[15] ^= 1
	for _, c := range prfs {
		a := c.sum(key16, url)
		if b := c.sum(key16, url); a != b {
			t.Errorf("%s: %x then %x for the same input", c.name, a, b)
		}
		if b := c.sum(other, url); a == b {
			t.Errorf("%s: %x under two keys", c.name, a)
		}
		for i := range url {
			u := append([]byte(nil), url...)
			u[i] ^= 0x20
			if b := c.sum(key16, u); a == b {
				t.Errorf("%s: byte %d changed, hash %x unchanged", c.name, i, a)
			}
		}
	}
	// SipHash paper, appendix A: key 00..0f, message 00..0e.
	msg := make([]byte, 15)
	k := make([]byte, 16)
	for i := range k {
		k[i] = byte(i)
		if i < 15 {
			msg[i] = byte(i)
		}
	}
	if got := prfs[0].sum(k, msg); got != 0xa129ca6149be45e5 {
		t.Errorf("siphash-2-4 test vector: %x", got)
	}
}

var sink uint64

// BenchmarkPRF: ns per 55-byte URL. highwayhash.Sum64 takes a 32-byte key
// slice; the benchmark passes a fixed one (no allocation in the loop). The
// three loops are written out rather than run through prfs on purpose:
// each calls its module's function directly, as internal/keyed would, without
// the indirect call through a func value that prfs adds.
func BenchmarkPRF(b *testing.B) {
	if len(url) != 55 {
		b.Fatalf("URL of %d bytes", len(url))
	}
	b.Run("siphash-2-4", func(b *testing.B) {
		b.SetBytes(int64(len(url)))
		b.ReportAllocs()
		var x uint64
		for b.Loop() {
			x += siphash.Hash(k0, k1, url)
		}
		sink = x
	})
	b.Run("siphash-1-3", func(b *testing.B) {
		b.SetBytes(int64(len(url)))
		b.ReportAllocs()
		var x uint64
		for b.Loop() {
			x += sip13.Sum64(k0, k1, url)
		}
		sink = x
	})
	b.Run("highwayhash-64", func(b *testing.B) {
		b.SetBytes(int64(len(url)))
		b.ReportAllocs()
		var x uint64
		for b.Loop() {
			x += highwayhash.Sum64(url, key32)
		}
		sink = x
	})
}

package signature

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/dchest/siphash"
	sip13 "github.com/dgryski/go-sip13"
)

// sipHashCD is SipHash-c-d written plainly from the paper, for checking:
// with (2, 4) it must be dchest's SipHash-2-4, with (1, 3) our SipHash13
// and dgryski's SipHash-1-3.
func sipHashCD(c, d int, k0, k1 uint64, p []byte) uint64 {
	v := [4]uint64{k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d, k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573}
	round := func() {
		v[0] += v[1]
		v[1] = bits.RotateLeft64(v[1], 13) ^ v[0]
		v[0] = bits.RotateLeft64(v[0], 32)
		v[2] += v[3]
		v[3] = bits.RotateLeft64(v[3], 16) ^ v[2]
		v[0] += v[3]
		v[3] = bits.RotateLeft64(v[3], 21) ^ v[0]
		v[2] += v[1]
		v[1] = bits.RotateLeft64(v[1], 17) ^ v[2]
		v[2] = bits.RotateLeft64(v[2], 32)
	}
	var last [8]byte
	n := len(p) / 8 * 8
	copy(last[:], p[n:])
	last[7] = byte(len(p))
	for i := 0; i <= n; i += 8 {
		m := binary.LittleEndian.Uint64(last[:])
		if i < n {
			m = binary.LittleEndian.Uint64(p[i:])
		}
		v[3] ^= m
		for range c {
			round()
		}
		v[0] ^= m
	}
	v[2] ^= 0xff
	for range d {
		round()
	}
	return v[0] ^ v[1] ^ v[2] ^ v[3]
}

func TestSipHash13(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := 0; n <= len(buf); n++ {
		k0, k1 := r.Uint64(), r.Uint64()
		p := buf[:n]
		if got, want := sipHashCD(2, 4, k0, k1, p), siphash.Hash(k0, k1, p); got != want {
			t.Fatalf("len %d: SipHash-2-4 reference %x, dchest %x", n, got, want)
		}
		want := sipHashCD(1, 3, k0, k1, p)
		if got := SipHash13(k0, k1, p); got != want {
			t.Fatalf("len %d: SipHash13 %x, reference SipHash-1-3 %x", n, got, want)
		}
		if got := sip13.Sum64(k0, k1, p); got != want {
			t.Fatalf("len %d: go-sip13 %x, reference SipHash-1-3 %x", n, got, want)
		}
	}
}

func BenchmarkSipHash(b *testing.B) {
	url := []byte("https://www.example.com/path/to/some/page.html?id=12345") // 55 bytes
	var sink uint64
	b.Run("1-3", func(b *testing.B) {
		for b.Loop() {
			sink += SipHash13(1, 2, url)
		}
	})
	b.Run("2-4 dchest", func(b *testing.B) {
		for b.Loop() {
			sink += siphash.Hash(1, 2, url)
		}
	})
	_ = sink
}

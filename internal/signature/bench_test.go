package signature_test

import (
	"testing"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// A typical ~55-byte URL, already canonical, and one that needs work.
var (
	benchCanonical = []byte("http://www.example.com/products/item.php?id=1234567890")
	benchMessy     = []byte("HTTP://WWW.Example.com:80/products/./item.php?id=%7e1234567#top")
)

func BenchmarkSum(b *testing.B) {
	for _, alg := range []signature.Algorithm{signature.IEEE, signature.Castagnoli} {
		b.Run(alg.String(), func(b *testing.B) {
			b.SetBytes(int64(len(benchCanonical)))
			b.ReportAllocs()
			for b.Loop() {
				alg.Sum(benchCanonical)
			}
		})
	}
}

func BenchmarkSign(b *testing.B) {
	for _, tc := range []struct {
		name string
		mode signature.Mode
		url  []byte
	}{
		{"none", signature.None, benchCanonical},
		{"safe/canonical", signature.Safe, benchCanonical},
		{"safe/messy", signature.Safe, benchMessy},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := signature.NewSigner(signature.IEEE, tc.mode)
			b.SetBytes(int64(len(tc.url)))
			b.ReportAllocs()
			for b.Loop() {
				s.Sign(tc.url)
			}
		})
	}
}

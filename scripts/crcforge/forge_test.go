package main

import (
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// solve finds the four bytes for any CRC state and target, for both
// polynomials.
func TestSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, alg := range []signature.Algorithm{signature.IEEE, signature.Castagnoli} {
		tab := crcTable(alg)
		inv := inverse(tab)
		for i := 0; i < 10000; i++ {
			crc, target := rng.Uint32(), rng.Uint32()
			b := solve(tab, inv, crc, target)
			if got := crc32.Update(crc, tab, b[:]); got != target {
				t.Fatalf("%v: solve(%08x, %08x) = %x, CRC %08x", alg, crc, target, b, got)
			}
		}
	}
}

func TestForge(t *testing.T) {
	for _, tc := range []struct {
		alg            signature.Algorithm
		mode           signature.Mode
		seen, prefix   string
		charset        string
		wantNormPrefix string // the forged URL's normal form starts with it
	}{
		{signature.IEEE, signature.Safe, "https://example.com/", "http://evil.example/x?q=", charsetQuery, "http://evil.example/x?q="},
		{signature.IEEE, signature.Safe, "https://example.com/", "HTTP://Evil.Example:80", charsetUnreserved, "http://evil.example/"},
		{signature.IEEE, signature.Safe, "http://a.example/%7euser/", "https://evil.example:443/a/./b", charsetQuery, "https://evil.example/a/b"},
		{signature.Castagnoli, signature.Safe, "http://a.example/x?id=1", "http://evil.example/%61", charsetUnreserved, "http://evil.example/a"},
		{signature.IEEE, signature.None, "http://a/b", "http://a/", charsetQuery, "http://a/"},
		// The prefix is the seen URL minus its last four bytes: the plain
		// solution is the seen URL itself, which is not a forgery.
		{signature.IEEE, signature.Safe, "http://a.example/abcdefgh", "http://a.example/abcd", charsetUnreserved, "http://a.example/abcd"},
		{signature.IEEE, signature.Safe, "not a url %zz", "http://evil.example/", charsetQuery, "http://evil.example/"},
	} {
		f, err := forge(tc.alg, tc.mode, tc.seen, tc.prefix, tc.charset)
		if err != nil {
			t.Errorf("forge(%q, %q): %v", tc.seen, tc.prefix, err)
			continue
		}
		s := signature.NewSigner(tc.alg, tc.mode)
		want, _ := s.Sign([]byte(tc.seen))
		got, ok := s.Sign([]byte(f.URL))
		norm := normalized(s, f.URL)
		if !ok || got != want || norm == normalized(s, tc.seen) || !strings.HasPrefix(f.URL, tc.prefix) || !strings.HasPrefix(norm, tc.wantNormPrefix) {
			t.Errorf("forge(%q, %q) = %q (normal form %q, %v, valid %v), want signature %v", tc.seen, tc.prefix, f.URL, norm, got, ok, want)
		}
		tail := f.URL[len(f.URL)-4:]
		for i := 0; i < 4; i++ {
			if !strings.Contains(tc.charset, tail[i:i+1]) {
				t.Errorf("forged %q: byte %q outside the charset", f.URL, tail[i])
			}
		}
	}
}

func TestForgeBadPrefix(t *testing.T) {
	for _, prefix := range []string{"http://evil.example/#frag", "http://evil.example/%zz", "http://evil.example:99999/"} {
		if f, err := forge(signature.IEEE, signature.Safe, "http://a/", prefix, charsetQuery); !errors.Is(err, errPrefix) {
			t.Errorf("forge with prefix %q: %v, %v; want errPrefix", prefix, f, err)
		}
	}
}

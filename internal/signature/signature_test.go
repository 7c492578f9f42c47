package signature_test

import (
	"bufio"
	"bytes"
	"errors"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// Known answers: the CRC check values ("123456789"), RFC 3720 B.4's 32 zero
// bytes for CRC32C, and URLs whose IEEE CRC was computed with Python's
// zlib.crc32.
func TestSumKnownAnswers(t *testing.T) {
	tests := []struct {
		alg  signature.Algorithm
		in   string
		want uint32
	}{
		{signature.IEEE, "123456789", 0xcbf43926},
		{signature.Castagnoli, "123456789", 0xe3069283},
		{signature.Castagnoli, string(make([]byte, 32)), 0x8a9136aa},
		{signature.IEEE, "http://example.com/", 0xa6643cc9},
		{signature.IEEE, "https://www.example.org/index.html?q=1", 0xc05e0592},
		{signature.IEEE, "http://a/b/c/d;p?q", 0x5ba2a5f4},
	}
	for _, tt := range tests {
		if got := tt.alg.Sum([]byte(tt.in)); uint32(got) != tt.want {
			t.Errorf("%v.Sum(%q) = %08x, want %08x", tt.alg, tt.in, uint32(got), tt.want)
		}
	}
}

func TestShardAndBit(t *testing.T) {
	s := signature.Signature(0xa6643cc9)
	if s.Shard() != 0xa6 || s.Bit() != 0x643cc9 || s.String() != "a6643cc9" {
		t.Fatalf("got shard %02x bit %06x string %s", s.Shard(), s.Bit(), s)
	}
}

type normCase struct {
	line      int
	in, want  string
	isInvalid bool
}

func readCases(t *testing.T) []normCase {
	t.Helper()
	f, err := os.Open("testdata/normalize.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []normCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		in, want, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("normalize.tsv:%d: no tab", n)
		}
		cases = append(cases, normCase{n, in, want, want == "!invalid"})
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases read", len(cases))
	}
	return cases
}

func TestNormalize(t *testing.T) {
	for _, c := range readCases(t) {
		got, err := signature.Normalize(nil, []byte(c.in))
		if c.isInvalid {
			if !errors.Is(err, signature.ErrInvalidURL) {
				t.Errorf("normalize.tsv:%d: Normalize(%q) = %q, %v; want ErrInvalidURL", c.line, c.in, got, err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("normalize.tsv:%d: Normalize(%q) = %q, %v; want %q", c.line, c.in, got, err, c.want)
		}
		// Normal forms are fixed points.
		again, err := signature.Normalize(nil, got)
		if err != nil || !bytes.Equal(again, got) {
			t.Errorf("normalize.tsv:%d: Normalize(%q) = %q, %v; not a fixed point", c.line, got, again, err)
		}
	}
}

// Equivalent URLs share a signature and different ones do not; invalid
// ones are signed raw and reported.
func TestSignerEquivalence(t *testing.T) {
	for _, alg := range []signature.Algorithm{signature.IEEE, signature.Castagnoli} {
		s := signature.NewSigner(alg, signature.Safe)
		for _, c := range readCases(t) {
			sig, ok := s.Sign([]byte(c.in))
			if c.isInvalid {
				if ok || sig != alg.Sum([]byte(c.in)) {
					t.Errorf("%v: Sign(%q) = %v, %v; want raw signature and ok=false", alg, c.in, sig, ok)
				}
				continue
			}
			if want := alg.Sum([]byte(c.want)); !ok || sig != want {
				t.Errorf("%v: Sign(%q) = %v, %v; want %v (of %q)", alg, c.in, sig, ok, want, c.want)
			}
		}
	}
	s := signature.NewSigner(signature.IEEE, signature.Safe)
	different := []string{"http://example.com/a", "http://example.com/A", "https://example.com/a",
		"http://example.com/a?", "http://example.com/a/", "http://example.com:8080/a", "http://www.example.com/a"}
	seen := map[signature.Signature]string{}
	for _, u := range different {
		sig, _ := s.Sign([]byte(u))
		if prev, dup := seen[sig]; dup {
			t.Errorf("%q and %q share signature %v", prev, u, sig)
		}
		seen[sig] = u
	}
}

func TestModeNoneSignsRawBytes(t *testing.T) {
	s := signature.NewSigner(signature.IEEE, signature.None)
	in := []byte("HTTP://Example.com:80/a/../b#x")
	if sig, ok := s.Sign(in); !ok || uint32(sig) != crc32.ChecksumIEEE(in) {
		t.Fatalf("Sign(%q) = %v, %v; want raw CRC", in, sig, ok)
	}
}

func TestParse(t *testing.T) {
	for _, name := range []string{"crc32", "crc32c"} {
		a, err := signature.ParseAlgorithm(name)
		if err != nil || a.String() != name {
			t.Errorf("ParseAlgorithm(%q) = %v, %v", name, a, err)
		}
	}
	if _, err := signature.ParseAlgorithm("md5"); !errors.Is(err, signature.ErrUnknownAlgorithm) {
		t.Errorf("ParseAlgorithm(md5) error = %v", err)
	}
	for _, name := range []string{"safe", "none"} {
		m, err := signature.ParseMode(name)
		if err != nil || m.String() != name {
			t.Errorf("ParseMode(%q) = %v, %v", name, m, err)
		}
	}
	if _, err := signature.ParseMode("aggressive"); !errors.Is(err, signature.ErrUnknownMode) {
		t.Errorf("ParseMode(aggressive) error = %v", err)
	}
}

func TestSignDoesNotAllocate(t *testing.T) {
	s := signature.NewSigner(signature.IEEE, signature.Safe)
	urls := [][]byte{
		[]byte("http://www.example.com/some/path/page.html?id=12345"),
		[]byte("HTTP://WWW.Example.com:80/some/./path/../page%7e.html#top"),
	}
	for _, u := range urls {
		s.Sign(u) // grow the scratch buffer once
		if n := testing.AllocsPerRun(1000, func() { s.Sign(u) }); n != 0 {
			t.Errorf("Sign(%q) allocates %v times per call", u, n)
		}
	}
}

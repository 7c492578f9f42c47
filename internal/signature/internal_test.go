package signature

import (
	"bytes"
	"testing"
)

// FuzzCanonical checks the fast path against the slow one: a URL the fast
// path takes as canonical must be its own normal form, and normalization
// never panics and reaches a fixed point.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"http://example.com/", "https://a.b/c/./d?e#f", "http://x/%2e%2E/y",
		"HTTP://X:80", "http://[::1]:8080/a", "x.com/a b", "http://x/..", "mailto:a@b", "//h/p"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		norm, err := appendNormalized(nil, in)
		if isCanonical(in) && (err != nil || !bytes.Equal(norm, in)) {
			t.Fatalf("isCanonical(%q) but Normalize = %q, %v", in, norm, err)
		}
		if err != nil {
			return
		}
		again, err := appendNormalized(nil, norm)
		if err != nil || !bytes.Equal(again, norm) {
			t.Fatalf("Normalize(%q) = %q; again = %q, %v", in, norm, again, err)
		}
	})
}

func TestBlank(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", true}, {" ", true}, {"\t \t", true},
		{"x", false}, {" x ", false}, {"\r", false}, {"\x00", false},
	} {
		if got := Blank([]byte(tc.in)); got != tc.want {
			t.Errorf("Blank(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

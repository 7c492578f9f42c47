package h2c

import (
	"net/netip"
	"testing"

	h2 "github.com/urldedupd/urldedupd/internal/h2c"
)

// The URL of an HTTP/2 request: userinfo in :authority (which RFC 9113
// §8.3.1 forbids) is a credential and is left out, in a request and in a
// CONNECT alike.
func TestAppendH2URL(t *testing.T) {
	server := netip.MustParseAddrPort("192.0.2.1:8080")
	for _, tc := range []struct {
		method, scheme, authority, path string
		want                            string
		tunnel                          bool
	}{
		{"GET", "http", "h.example", "/a", "http://h.example/a", false},
		{"GET", "http", "user:secret@h.example:8080", "/a@b", "http://h.example:8080/a@b", false},
		{"GET", "https", "a@b@h.example", "/", "https://h.example/", false},
		{"GET", "", "", "/x", "http://192.0.2.1:8080/x", false},
		{"CONNECT", "", "user:secret@t.example:443", "", "t.example:443", true},
		{"GET", "http", "h\x00@x/y", "/", "http://x_y/", false},
	} {
		r := &h2.Request{Method: []byte(tc.method), Scheme: []byte(tc.scheme), Authority: []byte(tc.authority), Path: []byte(tc.path)}
		got, tunnel := appendH2URL(nil, r, nil, server)
		if string(got) != tc.want || tunnel != tc.tunnel {
			t.Errorf("%s %q %q %q: %q (tunnel %v), want %q (tunnel %v)", tc.method, tc.scheme, tc.authority, tc.path, got, tunnel, tc.want, tc.tunnel)
		}
	}
}

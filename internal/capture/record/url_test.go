package record

import (
	"net/netip"
	"testing"
)

func TestAppendHTTPSURL(t *testing.T) {
	for _, tc := range []struct {
		name, server, want string
	}{
		{"a.example", "192.0.2.1:443", "https://a.example/"},
		{"a.example", "192.0.2.1:8443", "https://a.example:8443/"},
		{"", "192.0.2.1:443", "https://192.0.2.1/"},
		{"", "192.0.2.1:4433", "https://192.0.2.1:4433/"},
		{"", "[2001:db8::1]:443", "https://[2001:db8::1]/"},
		{"", "[2001:db8::1]:4433", "https://[2001:db8::1]:4433/"},
		{"", "[::ffff:192.0.2.1]:443", "https://192.0.2.1/"},
		{"evil/x?y#z@w v\x00", "192.0.2.1:443", "https://evil_x_y_z_w_v_/"},
	} {
		if got := string(AppendHTTPSURL(nil, []byte(tc.name), netip.MustParseAddrPort(tc.server))); got != tc.want {
			t.Errorf("%q %s: %q, want %q", tc.name, tc.server, got, tc.want)
		}
	}
}

// Userinfo is a credential: it never reaches a record, whatever holds it.
func TestWithoutUserinfo(t *testing.T) {
	for _, tc := range []struct{ in, authority, absolute string }{
		{"host", "host", "http://host"},
		{"user:pass@host:8080", "host:8080", "http://host:8080"},
		{"a@b@host", "host", "http://host"},
		{"user@", "", "http://"},
		{"host/p@q", "host/p@q", "http://host/p@q"}, // an '@' past the authority is the path's
		{"u:p@host?x@y#z@w", "host?x@y#z@w", "http://host?x@y#z@w"},
		{"u:p@[2001:db8::1]:443/", "[2001:db8::1]:443/", "http://[2001:db8::1]:443/"},
	} {
		if got := string(WithoutUserinfo([]byte(tc.in))); got != tc.authority {
			t.Errorf("WithoutUserinfo(%q) = %q, want %q", tc.in, got, tc.authority)
		}
		if got := string(AppendAbsolute(nil, []byte("http://"+tc.in))); got != tc.absolute {
			t.Errorf("AppendAbsolute(%q) = %q, want %q", "http://"+tc.in, got, tc.absolute)
		}
	}
	if got := string(AppendAbsolute(nil, []byte("no-scheme@x/\x01"))); got != "no-scheme@x/%01" {
		t.Errorf("AppendAbsolute without a scheme: %q", got)
	}
}

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

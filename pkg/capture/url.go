package capture

import (
	"net/netip"
	"strconv"
)

// appendURL appends the absolute URL of r, sent to server, to dst:
//   - origin-form "/p?q": http://HOST/p?q, HOST from the Host header, port
//     kept; without one (HTTP/1.0), the SOCKS destination the stream
//     opened with, else the server's address and its port unless 80;
//   - absolute-form "http://h/p" (proxy requests): as sent;
//   - authority-form "h:443" (CONNECT): h:443, as sent, and the request is
//     marked a tunnel;
//   - asterisk-form "*" (OPTIONS): http://HOST*, as tshark shows it.
func appendURL(dst []byte, r *request, server netip.AddrPort) []byte {
	t := r.target
	if r.tunnel {
		return append(dst, t...) // the authority a CONNECT opens, as sent
	}
	if hasScheme(t) {
		return append(dst, t...)
	}
	dst = append(dst, "http://"...)
	if len(t) > 0 && t[0] != '/' && t[0] != '*' {
		return append(dst, t...) // authority-form
	}
	if r.hasHost && len(r.host) > 0 {
		dst = append(dst, r.host...)
	} else if len(r.dest) > 0 {
		dst = append(dst, r.dest...) // the SOCKS destination
	} else {
		dst = appendHostPort(dst, server)
	}
	return append(dst, t...)
}

func appendHostPort(dst []byte, ap netip.AddrPort) []byte {
	a := ap.Addr().Unmap()
	if a.Is6() {
		dst = append(dst, '[')
		dst = a.AppendTo(dst)
		dst = append(dst, ']')
	} else {
		dst = a.AppendTo(dst)
	}
	if ap.Port() != 80 {
		dst = append(dst, ':')
		dst = strconv.AppendUint(dst, uint64(ap.Port()), 10)
	}
	return dst
}

// hasScheme reports whether t starts with "scheme://".
func hasScheme(t []byte) bool {
	for i, c := range t {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > 0:
			return len(t) >= i+3 && t[i+1] == '/' && t[i+2] == '/'
		default:
			return false
		}
	}
	return false
}

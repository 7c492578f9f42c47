package http1

import (
	"net/netip"
	"strconv"

	"github.com/urldedupd/urldedupd/internal/capture/record"
)

// appendURL appends the absolute URL of r, sent to server, to dst:
//   - origin-form "/p?q": http://HOST/p?q, HOST from the Host header, port
//     kept; without one (HTTP/1.0), the SOCKS destination the stream
//     opened with, else the server's address and its port unless 80;
//   - absolute-form "http://h/p" (proxy requests): as sent;
//   - authority-form "h:443" (CONNECT): h:443, as sent, and the request is
//     marked a tunnel;
//   - userinfo ("user:password@") in an absolute-form target, an
//     authority-form target or the Host field is left out: it is a
//     credential (record.WithoutUserinfo);
//   - asterisk-form "*" (OPTIONS): http://HOST*, as tshark shows it.
//
// The request line holds no control byte (the parser takes such a line as
// junk), but the target may hold any other byte and the Host header any
// byte but LF: the target's characters that the text rule forbids are
// percent-encoded (appendPath), the Host is taken as a TLS server name
// is (appendHostName: '_' for what would end the host or break a line).
func appendURL(dst []byte, r *request, server netip.AddrPort) []byte {
	t := r.target
	if r.tunnel {
		return record.AppendPath(dst, record.WithoutUserinfo(t)) // the authority a CONNECT opens, as sent
	}
	if hasScheme(t) {
		return record.AppendAbsolute(dst, t)
	}
	dst = append(dst, "http://"...)
	if len(t) > 0 && t[0] != '/' && t[0] != '*' {
		return record.AppendPath(dst, record.WithoutUserinfo(t)) // authority-form
	}
	if r.hasHost && len(r.host) > 0 {
		dst = record.AppendHostName(dst, record.WithoutUserinfo(r.host))
	} else if len(r.dest) > 0 {
		dst = append(dst, r.dest...) // the SOCKS destination, made a host name by setDest
	} else {
		dst = appendHostPort(dst, server)
	}
	return record.AppendPath(dst, t)
}

func appendHostPort(dst []byte, ap netip.AddrPort) []byte {
	return record.AppendHost(dst, ap, 80)
}

// authorityPort returns the port of a CONNECT's authority ("host:443",
// "[2001:db8::1]:443"), 0 when it has none or a bad one.
func authorityPort(auth []byte) uint16 {
	i := len(auth) - 1
	for i >= 0 && auth[i] >= '0' && auth[i] <= '9' {
		i--
	}
	if i < 0 || auth[i] != ':' || i == len(auth)-1 || len(auth)-1-i > 5 {
		return 0
	}
	n, _ := strconv.Atoi(string(auth[i+1:]))
	if n > 65535 {
		return 0
	}
	return uint16(n)
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

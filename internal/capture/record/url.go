package record

import (
	"bytes"
	"net/netip"
	"strconv"
)

// AppendHTTPSURL appends the URL of a TLS or QUIC ClientHello sent to
// server: https://NAME/ with the server name as sent (bytes that would end
// the host in a URL made '_'), or, without one, the server's address; then
// the server's port unless 443.
func AppendHTTPSURL(dst, name []byte, server netip.AddrPort) []byte {
	dst = append(dst, "https://"...)
	if len(name) == 0 {
		dst = AppendHost(dst, server, 443)
	} else {
		dst = AppendHostName(dst, name)
		if server.Port() != 443 {
			dst = append(dst, ':')
			dst = strconv.AppendUint(dst, uint64(server.Port()), 10)
		}
	}
	return append(dst, '/')
}

// WithoutUserinfo returns authority (an HTTP/2 :authority, a Host field,
// a CONNECT's target, or what follows an absolute URL's "://") past its
// userinfo, "user:password@" (RFC 3986 §3.2.1; RFC 9113 §8.3.1 forbids it
// in :authority): a credential, which a record never shows. The userinfo
// ends at the last '@' before the authority ends (at '/', '?', '#' or the
// end), as browsers read it; an authority of nothing but userinfo gives
// an empty host.
func WithoutUserinfo(authority []byte) []byte {
	end := len(authority)
	if j := bytes.IndexAny(authority, "/?#"); j >= 0 {
		end = j
	}
	return authority[bytes.LastIndexByte(authority[:end], '@')+1:]
}

// AppendAbsolute appends an absolute URL as sent, as AppendPath does, but
// for the userinfo of its authority (see WithoutUserinfo): a proxy
// request's "http://user:password@host/p" is recorded as
// "http://host/p".
func AppendAbsolute(dst, url []byte) []byte {
	i := bytes.Index(url, []byte("://"))
	if i < 0 {
		return AppendPath(dst, url)
	}
	return AppendPath(AppendPath(dst, url[:i+3]), WithoutUserinfo(url[i+3:]))
}

// AppendHostName appends a host name as sent, with the bytes that would
// end the host in a URL (space, '/', '?', '#', '@') and each character
// the text rule forbids (controls, U+2028, U+2029, bytes that are not
// UTF-8; see text.go) made '_'.
func AppendHostName(dst, name []byte) []byte {
	for i := 0; i < len(name); {
		c := name[i]
		if c > ' ' && c < 0x7f {
			if c == '/' || c == '?' || c == '#' || c == '@' {
				c = '_'
			}
			dst = append(dst, c)
			i++
			continue
		}
		n, forbidden := nextChar(name, i)
		if forbidden || c == ' ' {
			dst = append(dst, '_')
		} else {
			dst = append(dst, name[i:i+n]...)
		}
		i += n
	}
	return dst
}

// AppendHost appends the address of ap, IPv6 in brackets, and
// its port unless it is def.
func AppendHost(dst []byte, ap netip.AddrPort, def uint16) []byte {
	a := ap.Addr().Unmap()
	if a.Is6() {
		dst = append(dst, '[')
		dst = a.AppendTo(dst)
		dst = append(dst, ']')
	} else {
		dst = a.AppendTo(dst)
	}
	if ap.Port() != def {
		dst = append(dst, ':')
		dst = strconv.AppendUint(dst, uint64(ap.Port()), 10)
	}
	return dst
}

// AppendPath appends a request target as sent, its spaces and the bytes
// of each character the text rule forbids (controls, DEL, U+2028, U+2029,
// bytes that are not UTF-8; see text.go) percent-encoded.
func AppendPath(dst, path []byte) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(path); {
		c := path[i]
		if c > ' ' && c < 0x7f {
			dst = append(dst, c)
			i++
			continue
		}
		n, forbidden := nextChar(path, i)
		if forbidden || c == ' ' {
			for _, c := range path[i : i+n] {
				dst = append(dst, '%', hex[c>>4], hex[c&15])
			}
		} else {
			dst = append(dst, path[i:i+n]...)
		}
		i += n
	}
	return dst
}

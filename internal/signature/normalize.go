package signature

import (
	"bytes"
	"fmt"

	"golang.org/x/net/idna"
)

// Normalize appends the Safe normal form of url to dst and returns the
// extended buffer. For input it cannot parse it returns an error wrapping
// ErrInvalidURL; dst may then hold partial output.
func Normalize(dst, url []byte) ([]byte, error) {
	return appendNormalized(dst, url)
}

// Character classes, indexed by byte.
const (
	clUnreserved = 1 << iota // ALPHA DIGIT - . _ ~
	clSchemeRest             // ALPHA DIGIT + - .
	clEncode                 // must be percent-encoded wherever it appears
	clHex                    // 0-9 A-F a-f
	clHostPlain              // byte a canonical host may hold: a-z 0-9 - .
	clPathStop               // byte the canonical path scan must look at
)

var class [256]uint8

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		lower := b >= 'a' && b <= 'z'
		upper := b >= 'A' && b <= 'Z'
		digit := b >= '0' && b <= '9'
		if lower || upper || digit || b == '-' || b == '.' || b == '_' || b == '~' {
			class[c] |= clUnreserved
		}
		if lower || upper || digit || b == '+' || b == '-' || b == '.' {
			class[c] |= clSchemeRest
		}
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte("\"<>\\^`{|}"), b) >= 0 {
			class[c] |= clEncode
		}
		if digit || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F') {
			class[c] |= clHex
		}
		if lower || digit || b == '-' || b == '.' {
			class[c] |= clHostPlain
		}
		if class[c]&clEncode != 0 || b == '%' || b == '#' || b == '.' {
			class[c] |= clPathStop
		}
	}
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// Blank reports whether b is empty or only spaces and tabs: it holds no
// URL (the line filter skips such a line; the RESP front end refuses such
// an item).
func Blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidURL}, args...)...)
}

// splitScheme returns the length of url's scheme, or 0 when it has none. A
// scheme is ALPHA *(ALPHA / DIGIT / "+" / "-" / ".") followed by ":" and
// then "//" or anything but a digit, so that "host:8080/x" is a host and a
// port, not the scheme "host".
func splitScheme(url []byte) int {
	if len(url) == 0 || class[url[0]]&clUnreserved == 0 || url[0] <= '9' && url[0] >= '0' {
		return 0
	}
	for i := 1; i < len(url); i++ {
		c := url[i]
		if c == ':' {
			if i+1 < len(url) && url[i+1] >= '0' && url[i+1] <= '9' {
				return 0
			}
			return i
		}
		if class[c]&clSchemeRest == 0 {
			return 0
		}
	}
	return 0
}

func appendNormalized(dst, url []byte) ([]byte, error) {
	url = trimSpace(url)
	if len(url) == 0 {
		return dst, invalid("empty")
	}
	if i := bytes.IndexByte(url, '#'); i >= 0 {
		url = url[:i]
	}
	if len(url) == 0 {
		return dst, invalid("only a fragment")
	}
	start := len(dst)
	scheme := []byte("http")
	if n := splitScheme(url); n > 0 {
		scheme, url = url[:n], url[n+1:]
	} else if !bytes.HasPrefix(url, []byte("//")) {
		dst = append(dst, "http://"...)
		return appendHierarchical(dst, start, url)
	}
	for _, c := range scheme {
		dst = append(dst, lower(c))
	}
	dst = append(dst, ':')
	if !bytes.HasPrefix(url, []byte("//")) {
		// Opaque: mailto:, data:, urn: … only escapes are normalized.
		return appendEscaped(dst, url, false)
	}
	dst = append(dst, "//"...)
	return appendHierarchical(dst, start, url[2:])
}

// appendHierarchical appends authority, path and query. dst[schemeStart:]
// already holds "scheme://".
func appendHierarchical(dst []byte, schemeStart int, rest []byte) ([]byte, error) {
	scheme := dst[schemeStart : len(dst)-3]
	end := bytes.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	var err error
	if dst, err = appendAuthority(dst, scheme, authority); err != nil {
		return dst, err
	}
	path, query := rest, []byte(nil)
	if i := bytes.IndexByte(rest, '?'); i >= 0 {
		path, query = rest[:i], rest[i:]
	}
	pathStart := len(dst)
	if len(path) == 0 {
		dst = append(dst, '/')
	} else if dst, err = appendEscaped(dst, path, false); err != nil {
		return dst, err
	}
	dst = dst[:pathStart+removeDotSegments(dst[pathStart:])]
	if query != nil {
		return appendEscaped(dst, query, false)
	}
	return dst, nil
}

func appendAuthority(dst, scheme, authority []byte) ([]byte, error) {
	var err error
	if i := bytes.LastIndexByte(authority, '@'); i >= 0 {
		if dst, err = appendEscaped(dst, authority[:i], false); err != nil {
			return dst, err
		}
		dst = append(dst, '@')
		authority = authority[i+1:]
	}
	host, port := authority, []byte(nil)
	if len(host) > 0 && host[0] == '[' {
		i := bytes.IndexByte(host, ']')
		if i < 0 {
			return dst, invalid("unclosed [ in host")
		}
		host, port = authority[:i+1], authority[i+1:]
		if len(port) > 0 && port[0] != ':' {
			return dst, invalid("junk after ] in host")
		}
	} else if i := bytes.IndexByte(host, ':'); i >= 0 {
		host, port = authority[:i], authority[i:]
	}
	hostStart := len(dst)
	if dst, err = appendHost(dst, host); err != nil {
		return dst, err
	}
	if len(dst) == hostStart && defaultPort(scheme) > 0 {
		return dst, invalid("empty host")
	}
	return appendPort(dst, scheme, port)
}

func appendHost(dst, host []byte) ([]byte, error) {
	for _, c := range host {
		if c >= 0x80 {
			return appendIDN(dst, host)
		}
	}
	start := len(dst)
	dst, err := appendEscaped(dst, host, true)
	if err != nil {
		return dst, err
	}
	for i := start; i < len(dst); i++ {
		if dst[i] == '%' {
			i += 2 // keep escape hex upper-case
			continue
		}
		dst[i] = lower(dst[i])
	}
	return dst, nil
}

// appendIDN converts an internationalized host name to its ASCII form. It
// allocates; it is off the common path.
func appendIDN(dst, host []byte) ([]byte, error) {
	ascii, err := idna.Lookup.ToASCII(string(host))
	if err != nil {
		return dst, invalid("host %q: %v", host, err)
	}
	return append(dst, ascii...), nil
}

func appendPort(dst, scheme, port []byte) ([]byte, error) {
	if len(port) <= 1 { // none, or an empty ":"
		return dst, nil
	}
	digits := port[1:]
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return dst, invalid("port %q is not a number", port[1:])
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return dst, invalid("port %q out of range", port[1:])
		}
	}
	if n == defaultPort(scheme) {
		return dst, nil
	}
	dst = append(dst, ':')
	return append(dst, digits...), nil
}

func defaultPort(scheme []byte) int {
	switch string(scheme) {
	case "http", "ws":
		return 80
	case "https", "wss":
		return 443
	}
	return -1
}

// appendEscaped appends s with its percent-encoding normalized: escapes of
// unreserved characters decoded, other escapes' hex upper-cased, and bytes
// that may not appear raw encoded. A "%" not followed by two hex digits is
// an error. In a host (host == true) raw bytes that need encoding are an
// error instead.
func appendEscaped(dst, s []byte, host bool) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || class[s[i+1]]&clHex == 0 || class[s[i+2]]&clHex == 0 {
				return dst, invalid("bad percent-escape at byte %d", i)
			}
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if class[v]&clUnreserved != 0 {
				dst = append(dst, v)
			} else {
				dst = append(dst, '%', upperHex[v>>4], upperHex[v&15])
			}
			i += 2
		case class[c]&clEncode != 0:
			if host {
				return dst, invalid("byte %#02x in host", c)
			}
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil
}

// removeDotSegments applies RFC 3986 §5.2.4 to the absolute path p in place
// and returns the new length.
func removeDotSegments(p []byte) int {
	if !hasDotSegment(p) {
		return len(p)
	}
	w := 0 // p[:w] is the output buffer; it never overtakes the input
	r := 0
	for r < len(p) {
		// p[r] == '/' here; the segment runs to the next '/'.
		end := r + 1
		for end < len(p) && p[end] != '/' {
			end++
		}
		seg := p[r+1 : end]
		last := end == len(p)
		switch string(seg) {
		case ".":
			if last {
				p[w] = '/'
				w++
			}
		case "..":
			for w > 0 && p[w-1] != '/' {
				w--
			}
			if w > 0 {
				w-- // drop the '/' before the removed segment
			}
			if last {
				p[w] = '/'
				w++
			}
		default:
			w += copy(p[w:], p[r:end])
		}
		r = end
	}
	if w == 0 {
		p[0] = '/'
		w = 1
	}
	return w
}

// hasDotSegment reports whether the path holds a "." or ".." segment.
func hasDotSegment(p []byte) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '.' || (i > 0 && p[i-1] != '/') {
			continue
		}
		j := i + 1
		if j < len(p) && p[j] == '.' {
			j++
		}
		if j == len(p) || p[j] == '/' || p[j] == '?' {
			return true
		}
	}
	return false
}

package tlshello

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors Parse returns, wrapped with the place of the fault.
var (
	// ErrNotClientHello is returned for a handshake message of another
	// type than client_hello (1).
	ErrNotClientHello = errors.New("tlshello: not a ClientHello")
	// ErrTruncated is returned when the message is shorter than its
	// handshake header says.
	ErrTruncated = errors.New("tlshello: message truncated")
	// ErrMalformed is returned when a length inside the message runs past
	// what holds it, or a field breaks its encoding rules.
	ErrMalformed = errors.New("tlshello: malformed ClientHello")
	// ErrDuplicate is returned when an extension appears twice (RFC 8446
	// §4.2: "There MUST NOT be more than one extension of the same type").
	ErrDuplicate = errors.New("tlshello: extension repeated")
)

// TypeClientHello is the handshake message type of a ClientHello.
const TypeClientHello = 1

// Extension types read.
const (
	extServerName        = 0
	extALPN              = 16
	extSupportedVersions = 43
	extECH               = 0xfe0d
)

// Hello is what a TLS ClientHello offered. Its slices alias the parsed
// message.
type Hello struct {
	ServerName []byte // the server_name extension's host_name, as sent; empty when none
	ALPN       []byte // the ALPN extension's ProtocolNameList as on the wire: each name preceded by its 1-byte length
	Versions   []byte // offered versions as on the wire, 2 bytes each: supported_versions, else legacy_version (GREASE kept here; the printer drops GREASE)
	ECH        bool   // an encrypted_client_hello extension (0xfe0d) was present: ServerName is the public (outer) name
	// CipherSuites are the cipher suites offered, as on the wire, 2 bytes
	// each (GREASE kept).
	CipherSuites []byte
	// Extensions is the extensions block as on the wire: each extension's
	// type, length and data (NextExtension walks it). Nil when the hello
	// has none.
	Extensions []byte
}

// NextExtension takes the first extension off exts, an Extensions block
// that Parse has checked: its type and data, and the rest; ok is false at
// the end.
func NextExtension(exts []byte) (typ uint16, data, rest []byte, ok bool) {
	if len(exts) < 4 {
		return 0, nil, nil, false
	}
	n := 4 + int(binary.BigEndian.Uint16(exts[2:]))
	if len(exts) < n {
		return 0, nil, nil, false
	}
	return binary.BigEndian.Uint16(exts), exts[4:n], exts[n:], true
}

// HandshakeLen reports the whole length (4 + body) of the handshake
// message that starts b, when b holds at least 4 bytes (ok false
// otherwise): how a reassembler of CRYPTO frames or TLS records knows that
// the ClientHello is complete.
func HandshakeLen(b []byte) (n int, ok bool) {
	if len(b) < 4 {
		return 0, false
	}
	return 4 + (int(b[1])<<16 | int(b[2])<<8 | int(b[3])), true
}

// Parse reads one whole handshake message (msg_type 1, 3-byte length,
// body) into h, allocating nothing. Bytes past the message are ignored.
// On error h is left zero.
func Parse(msg []byte, h *Hello) error {
	*h = Hello{}
	n, ok := HandshakeLen(msg)
	if !ok {
		return fmt.Errorf("%w: %d bytes, no handshake header", ErrTruncated, len(msg))
	}
	if msg[0] != TypeClientHello {
		return fmt.Errorf("%w: handshake type %d", ErrNotClientHello, msg[0])
	}
	if len(msg) < n {
		return fmt.Errorf("%w: %d of %d bytes", ErrTruncated, len(msg), n)
	}
	if err := parseBody(msg[4:n], h); err != nil {
		*h = Hello{}
		return err
	}
	return nil
}

// reader takes length-prefixed fields off the front of a byte slice.
type reader []byte

func (r *reader) u8() (uint8, bool) {
	if len(*r) < 1 {
		return 0, false
	}
	v := (*r)[0]
	*r = (*r)[1:]
	return v, true
}

func (r *reader) u16() (uint16, bool) {
	if len(*r) < 2 {
		return 0, false
	}
	v := binary.BigEndian.Uint16(*r)
	*r = (*r)[2:]
	return v, true
}

func (r *reader) bytes(n int) ([]byte, bool) {
	if len(*r) < n {
		return nil, false
	}
	v := (*r)[:n:n]
	*r = (*r)[n:]
	return v, true
}

// vec8 and vec16 take a vector with a 1- or 2-byte length.
func (r *reader) vec8() ([]byte, bool) {
	n, ok := r.u8()
	if !ok {
		return nil, false
	}
	return r.bytes(int(n))
}

func (r *reader) vec16() ([]byte, bool) {
	n, ok := r.u16()
	if !ok {
		return nil, false
	}
	return r.bytes(int(n))
}

func malformed(what string) error { return fmt.Errorf("%w: %s", ErrMalformed, what) }

// parseBody reads a ClientHello body (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2).
func parseBody(body []byte, h *Hello) error {
	r := reader(body)
	legacy, ok := r.bytes(2)
	if !ok {
		return malformed("no legacy_version")
	}
	if _, ok := r.bytes(32); !ok {
		return malformed("no random")
	}
	sid, ok := r.vec8()
	if !ok || len(sid) > 32 {
		return malformed("legacy_session_id")
	}
	suites, ok := r.vec16()
	if !ok || len(suites) < 2 || len(suites)%2 != 0 {
		return malformed("cipher_suites")
	}
	comp, ok := r.vec8()
	if !ok || len(comp) < 1 {
		return malformed("legacy_compression_methods")
	}
	h.Versions, h.CipherSuites = legacy, suites
	if len(r) == 0 {
		return nil // no extensions (TLS 1.2 and before may send none)
	}
	exts, ok := r.vec16()
	if !ok {
		return malformed("extensions length runs past the message")
	}
	if len(r) != 0 {
		return malformed("bytes after the extensions")
	}
	h.Extensions = exts
	return parseExtensions(exts, h)
}

// parseExtensions reads the extensions block. Repeats are detected for
// every extension type below 128 (all that registries define there) and
// for encrypted_client_hello; a repeat of another (GREASE values, private
// use) is not looked for, to keep the check free of allocation.
func parseExtensions(exts reader, h *Hello) error {
	var seen [2]uint64
	for len(exts) > 0 {
		typ, ok := exts.u16()
		if !ok {
			return malformed("extension type cut short")
		}
		data, ok := exts.vec16()
		if !ok {
			return malformed("extension length runs past the extensions")
		}
		if typ < 128 {
			bit := uint64(1) << (typ % 64)
			if seen[typ/64]&bit != 0 {
				return fmt.Errorf("%w: type %d", ErrDuplicate, typ)
			}
			seen[typ/64] |= bit
		}
		var err error
		switch typ {
		case extServerName:
			err = serverName(data, h)
		case extALPN:
			err = alpn(data, h)
		case extSupportedVersions:
			err = supportedVersions(data, h)
		case extECH:
			if h.ECH {
				return fmt.Errorf("%w: type %d", ErrDuplicate, typ)
			}
			h.ECH = true
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// serverName reads a ServerNameList (RFC 6066 §3) and keeps its first
// host_name. An empty extension (a server's answer) leaves ServerName empty.
func serverName(data reader, h *Hello) error {
	if len(data) == 0 {
		return nil
	}
	l, ok := data.vec16()
	if !ok || len(data) != 0 {
		return malformed("server_name list length")
	}
	list := reader(l)
	for len(list) > 0 {
		typ, ok := list.u8()
		if !ok {
			return malformed("server_name entry cut short")
		}
		name, ok := list.vec16()
		if !ok {
			return malformed("server_name length runs past the list")
		}
		if typ == 0 && h.ServerName == nil {
			h.ServerName = name
		}
	}
	return nil
}

// alpn reads a ProtocolNameList (RFC 7301 §3.1): names of 1 to 255 bytes.
func alpn(data reader, h *Hello) error {
	list, ok := data.vec16()
	if !ok || len(data) != 0 {
		return malformed("ALPN list length")
	}
	for rest := reader(list); len(rest) > 0; {
		name, ok := rest.vec8()
		if !ok || len(name) == 0 {
			return malformed("ALPN protocol name")
		}
	}
	h.ALPN = list
	return nil
}

// supportedVersions reads the ClientHello's list (RFC 8446 §4.2.1).
func supportedVersions(data reader, h *Hello) error {
	list, ok := data.vec8()
	if !ok || len(data) != 0 || len(list) < 2 || len(list)%2 != 0 {
		return malformed("supported_versions")
	}
	h.Versions = list
	return nil
}

// NextProtocol takes the first name off an ALPN list as Hello.ALPN holds
// it; ok is false at the end of the list.
func NextProtocol(list []byte) (name, rest []byte, ok bool) {
	if len(list) == 0 || int(list[0])+1 > len(list) {
		return nil, nil, false
	}
	n := int(list[0]) + 1
	return list[1:n], list[n:], true
}

// NextVersion takes the first version off a list as Hello.Versions holds
// it; ok is false at the end of the list.
func NextVersion(list []byte) (v uint16, rest []byte, ok bool) {
	if len(list) < 2 {
		return 0, nil, false
	}
	return binary.BigEndian.Uint16(list), list[2:], true
}

// IsGREASE reports whether v is one of the reserved GREASE values (RFC
// 8701): 0x0a0a, 0x1a1a, ... 0xfafa. They are used for versions, cipher
// suites, extensions and ALPN-free code points alike.
func IsGREASE(v uint16) bool { return v&0x0f0f == 0x0a0a && v>>8 == v&0xff }

// AppendVersion appends the name of a TLS version: "TLS 1.3", "TLS 1.2",
// "TLS 1.1", "TLS 1.0", "SSL 3.0", otherwise its hex value as "0x7f1c".
func AppendVersion(b []byte, v uint16) []byte {
	switch v {
	case 0x0304:
		return append(b, "TLS 1.3"...)
	case 0x0303:
		return append(b, "TLS 1.2"...)
	case 0x0302:
		return append(b, "TLS 1.1"...)
	case 0x0301:
		return append(b, "TLS 1.0"...)
	case 0x0300:
		return append(b, "SSL 3.0"...)
	}
	const hex = "0123456789abcdef"
	return append(b, '0', 'x', hex[v>>12], hex[v>>8&15], hex[v>>4&15], hex[v&15])
}

// VersionName returns AppendVersion's name of v as a string.
func VersionName(v uint16) string { return string(AppendVersion(nil, v)) }

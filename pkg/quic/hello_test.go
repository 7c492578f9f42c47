package quic

import (
	"encoding/binary"
	"errors"
)

// testHello is what the tests read from a ClientHello: its server name
// and ALPN protocols.
//
// TODO(issue 11): tlshello.Parse once pkg/tlshello is on main.
type testHello struct {
	sni  string
	alpn []string
}

var errHello = errors.New("malformed ClientHello")

// parseTestHello reads a whole ClientHello handshake message.
func parseTestHello(msg []byte) (testHello, error) {
	var h testHello
	if len(msg) < 4 || msg[0] != 1 {
		return h, errHello
	}
	b := msg[4:]
	// legacy_version, random, then session ID, cipher suites, compression
	// methods: length-prefixed with 1, 2 and 1 bytes.
	if len(b) < 34 {
		return h, errHello
	}
	b = b[34:]
	for _, w := range []int{1, 2, 1} {
		var ok bool
		if _, b, ok = vector(b, w); !ok {
			return h, errHello
		}
	}
	exts, _, ok := vector(b, 2)
	if !ok {
		return h, errHello
	}
	for len(exts) >= 4 {
		typ := binary.BigEndian.Uint16(exts)
		body, rest, ok := vector(exts[2:], 2)
		if !ok {
			return h, errHello
		}
		exts = rest
		switch typ {
		case 0: // server_name: list of (type, name)
			list, _, ok := vector(body, 2)
			if !ok || len(list) < 1 {
				return h, errHello
			}
			name, _, ok := vector(list[1:], 2)
			if !ok {
				return h, errHello
			}
			h.sni = string(name)
		case 16: // ALPN
			list, _, ok := vector(body, 2)
			if !ok {
				return h, errHello
			}
			for len(list) > 0 {
				var p []byte
				if p, list, ok = vector(list, 1); !ok {
					return h, errHello
				}
				h.alpn = append(h.alpn, string(p))
			}
		}
	}
	return h, nil
}

// vector splits a w-byte length-prefixed vector off b.
func vector(b []byte, w int) (v, rest []byte, ok bool) {
	if len(b) < w {
		return nil, nil, false
	}
	n := 0
	for _, c := range b[:w] {
		n = n<<8 | int(c)
	}
	if len(b)-w < n {
		return nil, nil, false
	}
	return b[w : w+n], b[w+n:], true
}

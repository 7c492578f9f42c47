package quic

// typeClientHello is the TLS handshake message type of a ClientHello.
const typeClientHello = 1

// handshakeLen reports the whole length (4 + body) of the TLS handshake
// message that starts b, when b holds its 4-byte header.
//
// TODO(issue 11): tlshello.HandshakeLen once pkg/tlshello is on main.
func handshakeLen(b []byte) (n int, ok bool) {
	if len(b) < 4 {
		return 0, false
	}
	return 4 + (int(b[1])<<16 | int(b[2])<<8 | int(b[3])), true
}

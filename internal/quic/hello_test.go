package quic

import "github.com/urldedupd/urldedupd/internal/tlshello"

// testHello is what the tests compare of a ClientHello: its server name
// and ALPN protocols, read with tlshello.Parse.
type testHello struct {
	sni  string
	alpn []string
}

// parseTestHello reads a whole ClientHello handshake message.
func parseTestHello(msg []byte) (testHello, error) {
	var h tlshello.Hello
	if err := tlshello.Parse(msg, &h); err != nil {
		return testHello{}, err
	}
	th := testHello{sni: string(h.ServerName)}
	for name, rest, ok := tlshello.NextProtocol(h.ALPN); ok; name, rest, ok = tlshello.NextProtocol(rest) {
		th.alpn = append(th.alpn, string(name))
	}
	return th, nil
}

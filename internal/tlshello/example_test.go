package tlshello_test

import (
	"fmt"
	"os"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

func Example() {
	// A ClientHello curl sent (the handshake message, without its TLS
	// record header).
	msg, err := os.ReadFile("testdata/curl.hello")
	if err != nil {
		panic(err)
	}
	if n, ok := tlshello.HandshakeLen(msg); !ok || len(msg) < n {
		fmt.Println("need more bytes")
		return
	}
	var h tlshello.Hello
	if err := tlshello.Parse(msg, &h); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("server name %s\n", h.ServerName)
	for l := h.ALPN; ; {
		name, rest, ok := tlshello.NextProtocol(l)
		if !ok {
			break
		}
		fmt.Printf("ALPN %s\n", name)
		l = rest
	}
	for l := h.Versions; ; {
		v, rest, ok := tlshello.NextVersion(l)
		if !ok {
			break
		}
		if !tlshello.IsGREASE(v) {
			fmt.Println(tlshello.VersionName(v))
		}
		l = rest
	}
	// Output:
	// server name curl.example
	// ALPN h2
	// ALPN http/1.1
	// TLS 1.3
	// TLS 1.2
	// TLS 1.1
	// TLS 1.0
}

package quic_test

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/urldedupd/urldedupd/internal/quic"
)

// A Tracker takes a client's UDP datagrams and reports the ClientHello
// of each QUIC connection once: here the client Initial of RFC 9001
// Appendix A.2, given twice (a retransmission).
func Example() {
	b, err := os.ReadFile("testdata/rfc9001-a2-client-initial.hex")
	if err != nil {
		panic(err)
	}
	datagram, err := hex.DecodeString(strings.Join(strings.Fields(string(b)), ""))
	if err != nil {
		panic(err)
	}
	client := netip.MustParseAddrPort("192.0.2.10:50000")
	server := netip.MustParseAddrPort("192.0.2.1:443")
	tr := quic.NewTracker(nil, func(h *quic.ClientHello) {
		// h.Message is only valid during the call.
		fmt.Printf("%s -> %s QUIC %s: ClientHello of %d bytes\n", h.Client, h.Server, h.Version, len(h.Message))
	})
	fmt.Println(quic.IsInitial(datagram))
	tr.Add(time.Now(), client, server, datagram)
	tr.Add(time.Now(), client, server, datagram)
	fmt.Printf("decrypted %d, reported %d, late %d\n", tr.Stats.Decrypted, tr.Stats.Hellos, tr.Stats.Late)
	// Output:
	// true
	// 192.0.2.10:50000 -> 192.0.2.1:443 QUIC v1: ClientHello of 241 bytes
	// decrypted 1, reported 1, late 1
}

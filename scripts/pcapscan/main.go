// Command pcapscan is the floor for scripts/bench-replay.sh: it reads a
// pcap file and decodes Ethernet/IPv4/IPv6/TCP with gopacket's
// DecodingLayerParser, summing TCP payload bytes, with no reassembly and
// no HTTP parsing.
package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r, err := pcapgo.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var eth layers.Ethernet
	var ip4 layers.IPv4
	var ip6 layers.IPv6
	var tcp layers.TCP
	var payload gopacket.Payload
	p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &ip6, &tcp, &payload)
	p.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 8)
	var pkts, bytes int
	for {
		data, _, err := r.ZeroCopyReadPacketData()
		if err != nil {
			break
		}
		pkts++
		if p.DecodeLayers(data, &decoded) == nil {
			bytes += len(tcp.Payload)
		}
	}
	fmt.Fprintf(os.Stderr, "%d packets, %d TCP payload bytes\n", pkts, bytes)
}

// Command advcapture writes an adversarial capture for
// scripts/bench-replay.sh: many concurrent half-open connections (a SYN and
// nothing more) and many connections that each hold an unfinished request
// (a request line and half a header, never completed), interleaved, then a
// few normal requests. Reassembly memory must stay within its caps.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

func main() {
	halfOpen := flag.Int("half-open", 100000, "connections that only send a SYN")
	unfinished := flag.Int("unfinished", 100000, "connections holding an unfinished request")
	out := flag.String("o", "adversarial.pcap", "output file")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriter(bw)
	w.WriteFileHeader(65536, layers.LinkTypeEthernet)
	ts := time.Unix(1_700_000_000, 0)
	buf := gopacket.NewSerializeBuffer()
	server := net.IP{192, 0, 2, 1}
	write := func(i int, seq uint32, syn bool, payload string) {
		client := net.IP{198, 51, byte(i >> 16), byte(i >> 8)} // TEST-NET-2
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: client, DstIP: server}
		tcp := &layers.TCP{SrcPort: layers.TCPPort(1024 + i&0xff), DstPort: 80, Seq: seq, SYN: syn, ACK: !syn, Window: 65535}
		tcp.SetNetworkLayerForChecksum(ip)
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, EthernetType: layers.EthernetTypeIPv4}
		gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(payload))
		ts = ts.Add(time.Microsecond)
		w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}, buf.Bytes())
	}
	n := max(*halfOpen, *unfinished)
	for i := 0; i < n; i++ {
		if i < *halfOpen {
			write(i, 1000, true, "")
		}
		if i < *unfinished {
			j := i + *halfOpen
			write(j, 5000, true, "")
			write(j, 5001, false, fmt.Sprintf("GET /unfinished/%d?pad=%0200d HTTP/1.1\r\nHost: adv.example\r\nCookie: %0500d", i, i, i))
		}
	}
	for i := 0; i < 1000; i++ {
		j := 2*n + i
		write(j, 9000, true, "")
		write(j, 9001, false, fmt.Sprintf("GET /normal/%d HTTP/1.1\r\nHost: adv.example\r\n\r\n", i))
	}
	bw.Flush()
	f.Close()
}

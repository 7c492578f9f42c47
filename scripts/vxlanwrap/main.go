// Command vxlanwrap writes a VXLAN copy of an Ethernet capture: each frame
// becomes the inner frame of an outer Ethernet / IPv4 / UDP 4789 / VXLAN
// packet between two fixed VTEPs, with the same timestamp. It makes the
// tunnelled row of scripts/bench-replay.sh.
//
// Usage: vxlanwrap IN.pcap OUT.pcap
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// outer is Ethernet (14) + IPv4 (20) + UDP (8) + VXLAN (8).
const outer = 14 + 20 + 8 + 8

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: vxlanwrap IN.pcap OUT.pcap")
		os.Exit(2)
	}
	if err := wrap(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "vxlanwrap:", err)
		os.Exit(1)
	}
}

func wrap(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		return fmt.Errorf("%s: link type %v, want Ethernet", in, r.LinkType())
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(o, 1<<20)
	w := pcapgo.NewWriter(bw)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		return err
	}
	buf := make([]byte, 0, 65536+outer)
	for {
		data, ci, err := r.ZeroCopyReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		buf = appendOuter(buf[:0], len(data))
		buf = append(buf, data...)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ci.Timestamp, CaptureLength: len(buf), Length: len(buf)}, buf); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return o.Close()
}

// appendOuter appends the outer headers for an inner frame of n bytes.
func appendOuter(b []byte, n int) []byte {
	b = append(b, 0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00) // dst, src, IPv4
	ip := [20]byte{0x45, 0}
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+8+n))
	ip[8], ip[9] = 64, 17 // TTL, UDP
	copy(ip[12:], []byte{198, 18, 0, 1})
	copy(ip[16:], []byte{198, 18, 0, 2})
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	b = append(b, ip[:]...)
	udp := [8]byte{0xc0, 0x00, 0x12, 0xb5} // 49152 -> 4789, checksum 0
	binary.BigEndian.PutUint16(udp[4:], uint16(8+8+n))
	b = append(b, udp[:]...)
	return append(b, 0x08, 0, 0, 0, 0, 0, 0x2a, 0) // VXLAN: I flag, VNI 42
}

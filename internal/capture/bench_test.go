package capture

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/urldedupd/urldedupd/internal/capture/internal/capfile"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// memSource replays frames from memory.
type memSource struct {
	frames [][]byte
	i      int
}

func (m *memSource) Next(p *Packet) error {
	if m.i == len(m.frames) {
		return io.EOF
	}
	p.Data, p.Link = m.frames[m.i], 1 // Ethernet
	m.i++
	return nil
}
func (m *memSource) Drops() uint64 { return 0 }
func (m *memSource) Close() error  { return nil }

// benchFrames builds conns keep-alive connections of reqs requests each,
// one request per segment, interleaved, with the server's ACKs.
func benchFrames(b *testing.B, conns, reqs int) ([][]byte, int) {
	t := &testing.T{}
	s := netip.MustParseAddrPort("192.0.2.1:80")
	var frames [][]byte
	seqs := make([]uint32, conns)
	total := 0
	for c := range conns {
		cl := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.10"), uint16(20000+c))
		frames = append(frames, frame(t, linkEth, tcpSeg{src: cl, dst: s, seq: 100, syn: true}))
		seqs[c] = 101
	}
	for r := range reqs {
		for c := range conns {
			cl := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.10"), uint16(20000+c))
			p := fmt.Sprintf("GET /products/item-%d-%d.html?ref=bench HTTP/1.1\r\nHost: shop.example.com\r\nUser-Agent: bench/1.0\r\nAccept: */*\r\n\r\n", c, r)
			frames = append(frames, frame(t, linkEth, tcpSeg{src: cl, dst: s, seq: seqs[c], ack: true, payload: p}))
			frames = append(frames, frame(t, linkEth, tcpSeg{src: s, dst: cl, seq: 1, ack: true}))
			seqs[c] += uint32(len(p))
			total += len(p) + 54
		}
	}
	return frames, total
}

// BenchmarkEngine measures the per-packet path: decode, reassemble, parse,
// build the URL (emit does nothing), over 100 connections of 100 requests.
func BenchmarkEngine(b *testing.B) {
	frames, bytes := benchFrames(b, 100, 100)
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		e := NewEngine(nil, func(r *Request) { n++ })
		e.Run(context.Background(), &memSource{frames: frames})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/packet")
}

// TestEngineAllocations: after a connection is set up, packets and
// requests allocate nothing, over plain Ethernet and every layer-2
// encapsulation and tunnel.
func TestEngineAllocations(t *testing.T) {
	eth, _ := benchFrames(nil, 1, 200)
	type wrapCase struct {
		name string
		wrap func(ip []byte) []byte
		link layers.LinkType
	}
	var cases []wrapCase
	for _, tc := range l2Cases {
		cases = append(cases, wrapCase{tc.name, func(ip []byte) []byte { return tc.wrap(ip, false) }, layers.LinkTypeEthernet})
	}
	for _, tc := range tunnelCases {
		if !tc.v6 {
			cases = append(cases, wrapCase{tc.name, func(ip []byte) []byte { return tc.wrap(t, ip) }, layers.LinkTypeEthernet})
		}
	}
	for _, tc := range linkCases {
		cases = append(cases, wrapCase{tc.name, tc.wrap, tc.link})
	}
	for _, tc := range cases {
		frames := make([][]byte, len(eth))
		for i, f := range eth {
			frames[i] = tc.wrap(f[14:])
		}
		reqs := 0
		e := NewEngine(nil, func(r *Request) { reqs++ })
		for _, f := range frames[:101] {
			e.Packet(&Packet{Data: f, Link: tc.link})
		}
		rest := frames[101:]
		i := 0
		n := testing.AllocsPerRun(99, func() {
			p := Packet{Data: rest[i], Link: tc.link}
			e.Packet(&p)
			i++
		})
		if n != 0 || reqs < 100 || e.Stats().TCP != uint64(101+i) {
			t.Fatalf("%s: %v allocations per packet; %d requests, %d TCP segments of %d frames", tc.name, n, reqs, e.Stats().TCP, 101+i)
		}
	}
}

// BenchmarkFileSource reads the frames of BenchmarkEngine from a file, as
// pcap, pcapng and gzip; "gopacket" is pcapgo's reader on the same pcap,
// the one FileSource used before.
func BenchmarkFileSource(b *testing.B) {
	frames, _ := benchFrames(b, 100, 100)
	recs := make([]capfile.Record, len(frames))
	size := 0
	for i, f := range frames {
		recs[i] = capfile.Record{TS: time.Unix(1_700_000_000, int64(i)*1000), Data: f, Orig: len(f)}
		size += len(f)
	}
	o := binary.LittleEndian
	pcap := capfile.Pcap(o, false, layers.LinkTypeEthernet, 65535, recs)
	ng := append(capfile.NgSHB(o), capfile.NgIDB(o, layers.LinkTypeEthernet, 0, 0)...)
	for _, r := range recs {
		ng = append(ng, capfile.NgEPB(o, 0, capfile.NgUnits(r.TS, 0), r.Data, r.Orig)...)
	}
	dir := b.TempDir()
	files := map[string][]byte{"pcap": pcap, "pcapng": ng, "pcap.gz": capfile.Gzipped(pcap)}
	for _, name := range []string{"pcap", "pcapng", "pcap.gz", "gopacket"} {
		path := filepath.Join(dir, name)
		if name == "gopacket" {
			path = filepath.Join(dir, "pcap")
		} else {
			os.WriteFile(path, files[name], 0o644)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				if name == "gopacket" {
					f, _ := os.Open(path)
					r, _ := pcapgo.NewReader(bufio.NewReaderSize(f, 1<<20))
					for {
						if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
							break
						}
						n++
					}
					f.Close()
				} else {
					src, _ := OpenFiles(path)
					var p Packet
					for src.Next(&p) == nil {
						n++
					}
					src.Close()
				}
				if n != len(frames) {
					b.Fatalf("%d frames", n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/packet")
		})
	}
}

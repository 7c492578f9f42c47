// Command tlscapture writes the TLS-heavy capture of scripts/bench-tls.sh:
// N TCP connections, each a full handshake, a ClientHello, a reply from
// the server, a record of application data and both FINs, many of them
// open at once and their packets interleaved.
//
// The ClientHellos are the real ones recorded from Go, OpenSSL and curl in
// internal/tlshello/testdata (scripts/make-tlshello-testdata.sh), with the
// server_name rewritten to one of a few thousand names (repeated, some far
// more often than others) and every length in front of it fixed, and a new
// random. Some hellos are split over two TCP segments at a random byte,
// some over two TLS records; a large one (Go's X25519MLKEM768 key share)
// always spans two segments past the MSS. One in a hundred has no SNI.
// Ports are a mix of 443, 8443, 4433 and 10443 (the last one tshark only
// reads as TLS with -d tcp.port==10443,tls); one connection in ten is IPv6.
//
// Everything comes from one seeded generator: the same flags write the
// same file, byte for byte. On stderr it prints what the capture holds,
// for the benchmark to check both tools against.
//
// Usage: tlscapture -o OUT.pcap [-n 100000] [-names 3000] [-seed 1]
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// mss is the largest TCP payload of one segment, as on a 1500-byte MTU
// with timestamps.
const mss = 1448

// Ports the servers listen on, and the share of connections to each.
var ports = []struct {
	port  uint16
	share float64
}{{443, 0.70}, {8443, 0.15}, {4433, 0.10}, {10443, 0.05}}

// template is a recorded ClientHello and how often it is picked.
type template struct {
	name   string
	weight int
	msg    []byte
}

// templates lists the hellos of internal/tlshello/testdata used, by weight.
var templates = []template{
	{name: "go-default", weight: 30}, // 1,515 bytes: two segments
	{name: "curl", weight: 25},
	{name: "openssl-tls13", weight: 15},
	{name: "openssl-tls12-alpn", weight: 10},
	{name: "go-tls12", weight: 10},
	{name: "go-ech", weight: 9}, // the public name is the one rewritten
	{name: "openssl-nosni", weight: 1},
}

func main() {
	out := flag.String("o", "tls-bench.pcap", "output file")
	n := flag.Int("n", 100000, "TLS connections")
	names := flag.Int("names", 3000, "distinct server names")
	open := flag.Int("open", 500, "connections open at once")
	seed := flag.Uint64("seed", 1, "seed of everything random")
	hellos := flag.String("hellos", "internal/tlshello/testdata", "directory of the recorded *.hello files")
	flag.Parse()
	if err := run(*out, *hellos, *n, *names, *open, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "tlscapture:", err)
		os.Exit(1)
	}
}

func run(out, dir string, n, names, open int, seed uint64) error {
	if n <= 0 || names <= 0 || open <= 0 {
		return errors.New("-n, -names and -open must be positive")
	}
	for i := range templates {
		b, err := os.ReadFile(filepath.Join(dir, templates[i].name+".hello"))
		if err != nil {
			return err
		}
		if _, _, err := sniSpan(b); err != nil {
			return fmt.Errorf("%s.hello: %w", templates[i].name, err)
		}
		templates[i].msg = b
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &gen{rng: rng, hosts: hostNames(rng, names), seen: map[int]int{}, ts: time.Unix(1_763_900_000, 0).UTC(), buf: gopacket.NewSerializeBuffer()}
	g.noise = make([]byte, 1<<16)
	for i := range g.noise {
		g.noise[i] = byte(rng.Uint32())
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	g.w = pcapgo.NewWriter(bw)
	if err := g.w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		return err
	}
	// Up to open connections are live; each step sends the next packet of
	// a random one, and a finished one makes room for the next.
	live := make([]*conn, 0, open)
	started := 0
	for started < n || len(live) > 0 {
		for len(live) < open && started < n {
			live = append(live, g.newConn(started))
			started++
		}
		i := rng.IntN(len(live))
		if done, err := g.step(live[i]); err != nil {
			return err
		} else if done {
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	distinct := 0
	for _, c := range g.seen {
		if c > 0 {
			distinct++
		}
	}
	fmt.Fprintf(os.Stderr, "tlscapture: %s: %d connections, %d packets, %d ClientHellos (%d without SNI, %d split over two segments, %d over two records), %d distinct server names\n",
		out, n, g.packets, n, g.noSNI, g.splitSeg, g.splitRec, distinct)
	return nil
}

// hostNames makes k distinct lower-case host names.
func hostNames(rng *rand.Rand, k int) []string {
	tlds := []string{"example", "example.com", "example.net", "example.org", "test", "invalid"}
	subs := []string{"www", "api", "cdn", "static", "login", "m", "img", "mail"}
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	seen := make(map[string]bool, k)
	hosts := make([]string, 0, k)
	for len(hosts) < k {
		b := make([]byte, 3+rng.IntN(14))
		for i := range b {
			b[i] = letters[rng.IntN(26)] // a letter first and mostly
			if i > 0 && rng.IntN(4) == 0 {
				b[i] = letters[rng.IntN(len(letters))]
			}
		}
		h := string(b) + "." + tlds[rng.IntN(len(tlds))]
		if rng.IntN(2) == 0 {
			h = subs[rng.IntN(len(subs))] + "." + h
		}
		if !seen[h] {
			seen[h] = true
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// gen holds the writer and the generator's state.
type gen struct {
	rng     *rand.Rand
	hosts   []string
	seen    map[int]int // host index → hellos naming it
	noise   []byte      // payload bytes of the encrypted records
	w       *pcapgo.Writer
	ts      time.Time
	buf     gopacket.SerializeBuffer
	packets int

	noSNI, splitSeg, splitRec int
}

// conn is one connection: its addresses and the packets it has still to
// send, in order.
type conn struct {
	addrs
	pkts []pkt
}

// pkt is one TCP segment.
type pkt struct {
	fromClient bool
	flags      uint8 // tcpSYN | tcpACK | tcpFIN
	seq, ack   uint32
	payload    []byte
}

const (
	tcpFIN = 1 << iota
	tcpSYN
	tcpACK
)

// endpoint addresses of a connection.
type addrs struct {
	v6           bool
	client, srv  net.IP
	cport, sport uint16
}

func (g *gen) newConn(i int) *conn {
	cs := &conn{}
	cs.v6 = g.rng.IntN(10) == 0
	if cs.v6 {
		cs.client = net.IP{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, byte(i >> 8), byte(i)}
		cs.srv = net.IP{0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(1 + g.rng.IntN(50))}
	} else {
		cs.client = net.IP{10, byte(i >> 16), byte(i >> 8), byte(i)}
		cs.srv = net.IP{203, 0, 113, byte(1 + g.rng.IntN(50))}
	}
	cs.cport = uint16(32768 + i%28232) // Linux's ephemeral range: no well-known port tshark would read as another protocol
	u := g.rng.Float64()
	for _, p := range ports {
		cs.sport = p.port
		if u < p.share {
			break
		}
		u -= p.share
	}
	hello := g.hello()
	// The client's records: the hello in one TLS record, or (one in
	// twenty) its handshake message cut over two.
	var recs []byte
	if g.rng.IntN(20) == 0 {
		cut := 1 + g.rng.IntN(len(hello)-1)
		recs = appendRecord(appendRecord(nil, 0x16, hello[:cut]), 0x16, hello[cut:])
		g.splitRec++
	} else {
		recs = appendRecord(nil, 0x16, hello)
	}
	// Its segments: MSS-sized, and one in eight of those that fit in one
	// split at a random byte instead.
	var segs [][]byte
	if len(recs) <= mss && g.rng.IntN(8) == 0 {
		cut := 1 + g.rng.IntN(len(recs)-1)
		segs = [][]byte{recs[:cut], recs[cut:]}
	} else {
		for b := recs; len(b) > 0; {
			k := min(len(b), mss)
			segs = append(segs, b[:k])
			b = b[k:]
		}
	}
	if len(segs) > 1 {
		g.splitSeg++
	}
	reply := appendRecord(nil, 0x17, g.noiseBytes(100+g.rng.IntN(1200)))
	data := appendRecord(nil, 0x17, g.noiseBytes(30+g.rng.IntN(500)))

	ciss, siss := g.rng.Uint32(), g.rng.Uint32()
	c, s := ciss+1, siss+1
	add := func(fromClient bool, flags uint8, payload []byte) {
		p := pkt{fromClient: fromClient, flags: flags, payload: payload}
		if fromClient {
			p.seq, p.ack = c, s
			c += uint32(len(payload))
		} else {
			p.seq, p.ack = s, c
			s += uint32(len(payload))
		}
		if flags&tcpFIN != 0 {
			if fromClient {
				c++
			} else {
				s++
			}
		}
		cs.pkts = append(cs.pkts, p)
	}
	cs.pkts = append(cs.pkts, pkt{fromClient: true, flags: tcpSYN, seq: ciss},
		pkt{flags: tcpSYN | tcpACK, seq: siss, ack: c})
	add(true, tcpACK, nil)
	for _, seg := range segs {
		add(true, tcpACK, seg)
	}
	add(false, tcpACK, reply)
	add(true, tcpACK, data)
	add(false, tcpACK, nil)
	add(true, tcpACK|tcpFIN, nil)
	add(false, tcpACK|tcpFIN, nil)
	add(true, tcpACK, nil)
	return cs
}

// hello picks a template and names a host in it.
func (g *gen) hello() []byte {
	total := 0
	for _, t := range templates {
		total += t.weight
	}
	k := g.rng.IntN(total)
	var t template
	for _, t = range templates {
		if k < t.weight {
			break
		}
		k -= t.weight
	}
	msg := t.msg
	if off, n, err := sniSpan(msg); err == nil && n > 0 {
		// A skewed pick: a few names are very common, most are rare.
		u := g.rng.Float64()
		h := int(float64(len(g.hosts)) * u * u * u)
		g.seen[h]++
		msg = withServerName(msg, off, n, g.hosts[h])
	} else {
		msg = append([]byte(nil), msg...)
		g.noSNI++
	}
	for i := 6; i < 6+32; i++ { // a new random
		msg[i] = byte(g.rng.Uint32())
	}
	return msg
}

// noiseBytes returns n bytes of the noise buffer from a random offset.
func (g *gen) noiseBytes(n int) []byte {
	off := g.rng.IntN(len(g.noise) - n)
	return g.noise[off : off+n]
}

// step writes c's next packet; done when it was its last.
func (g *gen) step(c *conn) (done bool, err error) {
	p := c.pkts[0]
	c.pkts = c.pkts[1:]
	if err := g.write(c.addrs, p); err != nil {
		return false, err
	}
	return len(c.pkts) == 0, nil
}

var (
	macClient = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x02}
	macServer = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}
)

// write serializes and writes one frame, 7 to 40 µs after the last.
func (g *gen) write(a addrs, p pkt) error {
	tcp := &layers.TCP{SrcPort: layers.TCPPort(a.cport), DstPort: layers.TCPPort(a.sport), Seq: p.seq, Ack: p.ack,
		SYN: p.flags&tcpSYN != 0, ACK: p.flags&tcpACK != 0, FIN: p.flags&tcpFIN != 0, PSH: len(p.payload) > 0, Window: 64240}
	src, dst := a.client, a.srv
	eth := &layers.Ethernet{SrcMAC: macClient, DstMAC: macServer}
	if !p.fromClient {
		tcp.SrcPort, tcp.DstPort = tcp.DstPort, tcp.SrcPort
		src, dst = dst, src
		eth.SrcMAC, eth.DstMAC = eth.DstMAC, eth.SrcMAC
	}
	var ip gopacket.SerializableLayer
	if a.v6 {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: src, DstIP: dst}
		tcp.SetNetworkLayerForChecksum(ip6)
		ip = ip6
	} else {
		eth.EthernetType = layers.EthernetTypeIPv4
		ip4 := &layers.IPv4{Version: 4, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolTCP, SrcIP: src, DstIP: dst}
		tcp.SetNetworkLayerForChecksum(ip4)
		ip = ip4
	}
	if err := gopacket.SerializeLayers(g.buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, tcp, gopacket.Payload(p.payload)); err != nil {
		return err
	}
	g.ts = g.ts.Add(time.Duration(7000+g.rng.IntN(33000)) * time.Nanosecond)
	g.packets++
	b := g.buf.Bytes()
	return g.w.WritePacket(gopacket.CaptureInfo{Timestamp: g.ts, CaptureLength: len(b), Length: len(b)}, b)
}

// appendRecord appends a TLS record of type typ holding body.
func appendRecord(b []byte, typ byte, body []byte) []byte {
	b = append(b, typ, 3, 1)
	if typ != 0x16 {
		b[len(b)-1] = 3 // TLS 1.2's record version, as TLS 1.3 sends after the hello
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

// sniSpan finds the server_name extension of a ClientHello (a whole
// handshake message): the offset of its 4-byte extension header and its
// whole length (header included); n is 0 when there is none.
func sniSpan(msg []byte) (off, n int, err error) {
	bad := errors.New("not a ClientHello this tool can rewrite")
	if len(msg) < 4 || msg[0] != 1 || 4+(int(msg[1])<<16|int(msg[2])<<8|int(msg[3])) != len(msg) {
		return 0, 0, bad
	}
	p := 4 + 2 + 32 // header, legacy_version, random
	field := func(lenBytes int) bool {
		if p+lenBytes > len(msg) {
			return false
		}
		l := 0
		for _, c := range msg[p : p+lenBytes] {
			l = l<<8 | int(c)
		}
		p += lenBytes + l
		return p <= len(msg)
	}
	if !field(1) || !field(2) || !field(1) { // session id, cipher suites, compression
		return 0, 0, bad
	}
	if p+2 > len(msg) || p+2+int(binary.BigEndian.Uint16(msg[p:])) != len(msg) {
		return 0, 0, bad
	}
	for p += 2; p+4 <= len(msg); {
		typ, l := binary.BigEndian.Uint16(msg[p:]), int(binary.BigEndian.Uint16(msg[p+2:]))
		if p+4+l > len(msg) {
			return 0, 0, bad
		}
		if typ == 0 {
			return p, 4 + l, nil
		}
		p += 4 + l
	}
	return 0, 0, nil
}

// withServerName returns a copy of msg whose server_name extension (at
// off, n bytes) names host, with the extension's, the name list's, the
// extensions block's and the handshake message's lengths fixed.
func withServerName(msg []byte, off, n int, host string) []byte {
	ext := make([]byte, 0, 9+len(host))
	ext = binary.BigEndian.AppendUint16(ext, 0)                   // server_name
	ext = binary.BigEndian.AppendUint16(ext, uint16(5+len(host))) // extension_data length
	ext = binary.BigEndian.AppendUint16(ext, uint16(3+len(host))) // server_name_list length
	ext = append(ext, 0)                                          // host_name
	ext = binary.BigEndian.AppendUint16(ext, uint16(len(host)))
	ext = append(ext, host...)
	out := make([]byte, 0, len(msg)-n+len(ext))
	out = append(append(append(out, msg[:off]...), ext...), msg[off+n:]...)
	delta := len(ext) - n
	// The extensions block length sits right before the first extension;
	// find it again by walking the fixed fields.
	p := 4 + 2 + 32
	p += 1 + int(out[p])
	p += 2 + int(binary.BigEndian.Uint16(out[p:]))
	p += 1 + int(out[p])
	binary.BigEndian.PutUint16(out[p:], uint16(int(binary.BigEndian.Uint16(out[p:]))+delta))
	l := len(out) - 4
	out[1], out[2], out[3] = byte(l>>16), byte(l>>8), byte(l)
	return out
}

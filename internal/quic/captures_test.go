package quic

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// The committed captures, testdata/quicgo-*.pcap: the quicgoCases
// exchanges, recorded at the client's socket (both directions) and written
// as raw IPv4 packets with the server's port made 443. QUIC_WRITE_CAPTURES=1
// makes them again.

func capturePath(name string) string { return filepath.Join("testdata", "quicgo-"+name+".pcap") }

// serverPort is the port the captures give the server.
const serverPort = 443

func writeCapture(t *testing.T, path string, ds []datagram) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeRaw); err != nil {
		t.Fatal(err)
	}
	server := ds[0].dst.Port()
	port := func(a netip.AddrPort) layers.UDPPort {
		if a.Port() == server {
			return serverPort
		}
		return layers.UDPPort(a.Port())
	}
	for _, d := range ds {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: d.src.Addr().AsSlice(), DstIP: d.dst.Addr().AsSlice()}
		udp := &layers.UDP{SrcPort: port(d.src), DstPort: port(d.dst)}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, udp, gopacket.Payload(d.data)); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: d.at, CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
}

// readCapture reads a raw-IPv4 capture of UDP datagrams.
func readCapture(t testing.TB, path string) []datagram {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var ds []datagram
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return ds
		}
		if err != nil {
			t.Fatal(err)
		}
		p := gopacket.NewPacket(data, layers.LayerTypeIPv4, gopacket.Default)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		udp, _ := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if ip == nil || udp == nil {
			t.Fatalf("%s: a packet that is not UDP over IPv4", path)
		}
		src, _ := netip.AddrFromSlice(ip.SrcIP)
		dst, _ := netip.AddrFromSlice(ip.DstIP)
		ds = append(ds, datagram{ci.Timestamp, netip.AddrPortFrom(src, uint16(udp.SrcPort)), netip.AddrPortFrom(dst, uint16(udp.DstPort)), udp.Payload})
	}
}

func TestCaptures(t *testing.T) {
	write := os.Getenv("QUIC_WRITE_CAPTURES") != ""
	for _, tc := range quicgoCases {
		t.Run(tc.name, func(t *testing.T) {
			path := capturePath(tc.name)
			if write {
				writeCapture(t, path, tc.run(t))
			}
			tr, got := newTestTracker(t, nil)
			track(t, tr, readCapture(t, path), got)
			if !slices.EqualFunc(*got, tc.want(), helloEqual) {
				t.Errorf("reported %+v, want %+v", *got, tc.want())
			}
			if s := tr.Stats; s.AuthFailed != 0 || s.Malformed != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// The server names tshark finds in the committed captures (it derives the
// Initial keys and decrypts the ClientHellos itself) are the ones a
// Tracker reports.
func TestCapturesTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is needed (make test installs it): ", err)
	}
	for _, tc := range quicgoCases {
		t.Run(tc.name, func(t *testing.T) {
			path := capturePath(tc.name)
			out, err := exec.Command("tshark", "-n", "-r", path, "-d", "udp.port==443,quic",
				"-Y", "quic && tls.handshake.type==1", "-T", "fields", "-e", "tls.handshake.extensions_server_name").Output()
			if err != nil {
				t.Fatalf("tshark: %v", err)
			}
			// tshark shows every ClientHello it decrypts: the ones after a
			// Retry or a version negotiation too, which are the same
			// connection's, not reported again. Their distinct names in
			// order are what is compared.
			var theirs []string
			for _, l := range strings.Fields(string(out)) {
				if len(theirs) == 0 || theirs[len(theirs)-1] != l {
					theirs = append(theirs, l)
				}
			}
			tr, got := newTestTracker(t, nil)
			track(t, tr, readCapture(t, path), got)
			var ours []string
			for _, h := range *got {
				ours = append(ours, h.sni)
			}
			if !slices.Equal(ours, theirs) {
				t.Errorf("names %q, tshark %q (raw %q)", ours, theirs, out)
			}
		})
	}
}

package quic

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
)

// Real QUIC traffic: quic-go's client and server over loopback, the
// client's socket wrapped to record every datagram it sends and receives.
// quic-go is used only by the tests (docs/dependencies.md).

// datagram is one recorded UDP datagram.
type datagram struct {
	at       time.Time
	src, dst netip.AddrPort
	data     []byte
}

// recordingConn records what goes through a client's UDP socket. It
// hides the socket's other methods (ReadMsgUDP ...) so that quic-go uses
// ReadFrom and WriteTo.
type recordingConn struct {
	net.PacketConn
	mu  sync.Mutex
	log []datagram
}

func (r *recordingConn) add(src, dst net.Addr, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, datagram{time.Now(), addrPort(src), addrPort(dst), bytes.Clone(b)})
}

func addrPort(a net.Addr) netip.AddrPort {
	u := a.(*net.UDPAddr).AddrPort()
	return netip.AddrPortFrom(u.Addr().Unmap(), u.Port())
}

func (r *recordingConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	// Recorded before it is sent, so that the reply is recorded after it.
	r.add(r.LocalAddr(), addr, b)
	return r.PacketConn.WriteTo(b, addr)
}

func (r *recordingConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, addr, err := r.PacketConn.ReadFrom(b)
	if err == nil {
		r.add(addr, r.LocalAddr(), b[:n])
	}
	return n, addr, err
}

func (r *recordingConn) datagrams() []datagram {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

func testCert(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "quic test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"a.example", "b.example"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// quicgoCase is a quic-go exchange: a server, one client socket, and the
// connections the client makes from it.
type quicgoCase struct {
	name           string
	serverVersions []quicgo.Version
	clientVersions []quicgo.Version
	retry          bool
	smallHello     bool     // X25519 alone: the ClientHello fits one Initial; else X25519MLKEM768 spreads it over two
	names          []string // one connection per name, in order, from the same socket
	alpn           []string
}

var quicgoCases = []quicgoCase{
	{name: "v1", clientVersions: []quicgo.Version{quicgo.Version1}, smallHello: true, names: []string{"a.example"}, alpn: []string{"h3"}},
	{name: "v1-two-initials", clientVersions: []quicgo.Version{quicgo.Version1}, names: []string{"a.example"}, alpn: []string{"h3", "hq-interop"}},
	{name: "v2", serverVersions: []quicgo.Version{quicgo.Version2, quicgo.Version1}, clientVersions: []quicgo.Version{quicgo.Version2}, names: []string{"b.example"}, alpn: []string{"h3"}},
	{name: "retry", clientVersions: []quicgo.Version{quicgo.Version1}, retry: true, names: []string{"a.example"}, alpn: []string{"h3"}},
	// One Initial: the version negotiation comes after the whole
	// ClientHello (with two, it may come between them).
	{name: "version-negotiation", serverVersions: []quicgo.Version{quicgo.Version1}, clientVersions: []quicgo.Version{quicgo.Version2, quicgo.Version1}, smallHello: true, names: []string{"b.example"}, alpn: []string{"h3"}},
	{name: "two-connections", clientVersions: []quicgo.Version{quicgo.Version1}, names: []string{"a.example", "b.example"}, alpn: []string{"h3"}},
}

// run makes the exchange and returns what the client's socket carried.
func (tc quicgoCase) run(t testing.TB) []datagram {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srvConn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srvTr := &quicgo.Transport{Conn: srvConn}
	if tc.retry {
		srvTr.VerifySourceAddress = func(net.Addr) bool { return true }
	}
	defer srvTr.Close()
	ln, err := srvTr.Listen(&tls.Config{Certificates: []tls.Certificate{testCert(t)}, NextProtos: tc.alpn}, &quicgo.Config{Versions: tc.serverVersions})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// One value per connection the server accepted (nil) or the error
	// that ended its Accept. The client keeps each connection open until
	// the server has accepted it: quic-go's server never hands over a
	// connection closed before its handshake completed, and a client
	// that closes at once can beat its own Finished on a loaded machine.
	accepted := make(chan error, len(tc.names))
	go func() {
		for range tc.names {
			_, err := ln.Accept(ctx)
			accepted <- err
			if err != nil {
				return
			}
		}
	}()

	cliConn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingConn{PacketConn: cliConn}
	cliTr := &quicgo.Transport{Conn: rec}
	defer cliTr.Close()
	for _, name := range tc.names {
		conf := &tls.Config{ServerName: name, NextProtos: tc.alpn, InsecureSkipVerify: true}
		if tc.smallHello {
			conf.CurvePreferences = []tls.CurveID{tls.X25519}
		}
		c, err := cliTr.Dial(ctx, srvConn.LocalAddr(), conf, &quicgo.Config{Versions: tc.clientVersions})
		if err != nil {
			t.Fatalf("dial %s: %v", name, err)
		}
		err = <-accepted
		c.CloseWithError(0, "")
		if err != nil {
			t.Fatalf("accept %s: %v", name, err)
		}
	}
	return rec.datagrams()
}

// wantHello is a ClientHello a Tracker must report.
type wantHello struct {
	sni     string
	alpn    []string
	version Version
}

func (tc quicgoCase) want() []wantHello {
	// After a version negotiation, reported from the first attempt, in
	// the client's first version: the attempt after it is not reported.
	v := Version(tc.clientVersions[0])
	var w []wantHello
	for _, n := range tc.names {
		w = append(w, wantHello{n, tc.alpn, v})
	}
	return w
}

// track runs datagrams through a Tracker and returns what it reported.
func track(t testing.TB, tr *Tracker, ds []datagram, got *[]wantHello) {
	t.Helper()
	for _, d := range ds {
		tr.Add(d.at, d.src, d.dst, d.data)
	}
}

func newTestTracker(t testing.TB, opts *Options) (*Tracker, *[]wantHello) {
	got := new([]wantHello)
	tr := NewTracker(opts, func(c *ClientHello) {
		h, err := parseTestHello(c.Message)
		if err != nil {
			t.Errorf("reported ClientHello: %v", err)
		}
		*got = append(*got, wantHello{h.sni, h.alpn, c.Version})
	})
	return tr, got
}

func TestQuicGo(t *testing.T) {
	for _, tc := range quicgoCases {
		t.Run(tc.name, func(t *testing.T) {
			ds := tc.run(t)
			tr, got := newTestTracker(t, nil)
			track(t, tr, ds, got)
			if !slices.EqualFunc(*got, tc.want(), helloEqual) {
				t.Errorf("reported %+v, want %+v", *got, tc.want())
			}
			s := tr.Stats
			if s.AuthFailed != 0 || s.Malformed != 0 || s.Hellos != uint64(len(tc.names)) {
				t.Errorf("stats %+v", s)
			}
			if tc.name == "v1-two-initials" && s.Decrypted < 2 {
				t.Errorf("the ClientHello took %d Initials, want 2", s.Decrypted)
			}
			if (tc.retry || tc.serverVersions != nil) && s.Late == 0 {
				t.Errorf("the Initial after the Retry was not seen: %+v", s)
			}
		})
	}
}

func helloEqual(a, b wantHello) bool {
	return a.sni == b.sni && a.version == b.version && slices.Equal(a.alpn, b.alpn)
}

package quic

import (
	"net/netip"
	"runtime"
	"testing"
	"time"
)

func testTime(ms int) time.Time { return time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond) }

func clientPort(i int) netip.AddrPort { return netip.AddrPortFrom(testClient.Addr(), uint16(40000+i)) }

// partial is the first Initial of connection i: the first 100 bytes of a
// 1000-byte ClientHello.
func partial(i int) []byte {
	return sealInitial(Version1, []byte{byte(i), byte(i >> 8), 3, 4, 5, 6, 7, 8}, []byte{byte(i)}, 0, cryptoFrame(0, fakeHello(996)[:100]))
}

func countingTracker(opts *Options) (*Tracker, *int) {
	n := new(int)
	return NewTracker(opts, func(*ClientHello) { *n++ }), n
}

func TestMaxConns(t *testing.T) {
	tr, _ := countingTracker(&Options{MaxConns: 4})
	for i := range 10 {
		tr.Add(testTime(i), clientPort(i), testServer, partial(i))
	}
	if tr.Conns() != 4 || tr.Stats.Evicted != 6 || tr.Stats.Conns != 10 {
		t.Errorf("%d conns, %+v", tr.Conns(), tr.Stats)
	}
	if tr.Buffered() != 4*minBuf {
		t.Errorf("buffered %d", tr.Buffered())
	}
}

func TestMaxBytes(t *testing.T) {
	tr, _ := countingTracker(&Options{MaxBytes: 3 * minBuf})
	for i := range 5 {
		tr.Add(testTime(i), clientPort(i), testServer, partial(i))
		if tr.Buffered() > 3*minBuf {
			t.Fatalf("buffered %d over the cap", tr.Buffered())
		}
	}
	if tr.Stats.Evicted != 2 || tr.Conns() != 3 {
		t.Errorf("%d conns, %+v", tr.Conns(), tr.Stats)
	}
	// A cap smaller than one buffer: the connection that needs it is the
	// one dropped.
	tr, _ = countingTracker(&Options{MaxBytes: 100})
	tr.Add(testTime(0), clientPort(0), testServer, partial(0))
	if tr.Buffered() != 0 || tr.Conns() != 0 || tr.Stats.Evicted != 1 {
		t.Errorf("%d conns, %d bytes, %+v", tr.Conns(), tr.Buffered(), tr.Stats)
	}
}

func TestMaxHello(t *testing.T) {
	tr, n := countingTracker(&Options{MaxHello: 1000})
	msg := fakeHello(1000) // 1004 bytes with its header
	tr.Add(testTime(0), clientPort(0), testServer, sealInitial(Version1, []byte{1, 2, 3, 4}, nil, 0, cryptoFrame(0, msg)))
	if *n != 0 || tr.Stats.NotHello != 1 || tr.Conns() != 0 || tr.Done() != 1 {
		t.Errorf("%d reported, %+v", *n, tr.Stats)
	}
	// Not a ClientHello (a ServerHello): given up as soon as its type is in.
	tr.Add(testTime(0), clientPort(1), testServer, sealInitial(Version1, []byte{1, 2, 3, 5}, nil, 0, cryptoFrame(0, []byte{2, 0, 0, 8})))
	if *n != 0 || tr.Stats.NotHello != 2 {
		t.Errorf("%d reported, %+v", *n, tr.Stats)
	}
}

func TestTimeout(t *testing.T) {
	tr, n := countingTracker(&Options{Timeout: 5 * time.Second})
	tr.Add(testTime(0), clientPort(0), testServer, partial(0))
	tr.Add(testTime(4000), clientPort(1), testServer, partial(1))
	if tr.Conns() != 2 {
		t.Fatalf("%d conns", tr.Conns())
	}
	tr.Add(testTime(5500), clientPort(2), testServer, []byte{0x40}) // a short header packet: the clock moves on
	if tr.Conns() != 1 || tr.Stats.Expired != 1 || tr.Buffered() != minBuf {
		t.Errorf("%d conns, %d bytes, %+v", tr.Conns(), tr.Buffered(), tr.Stats)
	}
	// The rest of the expired one's ClientHello comes: its keys are gone,
	// it starts no connection (no offset 0).
	rest := sealInitial(Version1, []byte{0, 0, 3, 4, 5, 6, 7, 8}, []byte{0}, 1, cryptoFrame(100, fakeHello(996)[100:]))
	tr.Add(testTime(5600), clientPort(0), testServer, rest)
	if *n != 0 {
		t.Errorf("%d reported", *n)
	}
}

func TestMaxDoneAndLinger(t *testing.T) {
	tr, n := countingTracker(&Options{MaxDone: 2, DoneLinger: 30 * time.Second})
	hello := func(i int) []byte {
		return sealInitial(Version1, []byte{byte(i), 2, 3, 4}, []byte{byte(i)}, 0, cryptoFrame(0, fakeHello(50)))
	}
	for i := range 3 {
		tr.Add(testTime(i), clientPort(i), testServer, hello(i))
	}
	if *n != 3 || tr.Done() != 2 {
		t.Fatalf("%d reported, %d done", *n, tr.Done())
	}
	tr.Add(testTime(10), clientPort(2), testServer, hello(2)) // remembered: late
	tr.Add(testTime(11), clientPort(0), testServer, hello(0)) // forgotten at the cap: reported again
	if *n != 4 || tr.Stats.Late != 1 {
		t.Errorf("%d reported, %+v", *n, tr.Stats)
	}
	tr.Add(testTime(31000), clientPort(9), testServer, []byte{0x40})
	if tr.Done() != 0 {
		t.Errorf("%d done after the linger", tr.Done())
	}
	tr.Add(testTime(31001), clientPort(2), testServer, hello(2))
	if *n != 5 {
		t.Errorf("%d reported after the linger", *n)
	}
}

// More than maxSpans separate CRYPTO ranges: the ones past it are dropped
// and counted; the held bytes stay bounded.
func TestMaxSpans(t *testing.T) {
	tr, n := countingTracker(nil)
	msg := fakeHello(996)
	var frames []byte
	for i := range maxSpans + 5 {
		off := 10 + 20*i
		frames = append(frames, cryptoFrame(off, msg[off:off+10])...)
	}
	tr.Add(testTime(0), clientPort(0), testServer, sealInitial(Version1, []byte{1, 2, 3, 4}, nil, 0, frames))
	if tr.Stats.CryptoDropped != 5 || tr.Conns() != 1 {
		t.Fatalf("%+v", tr.Stats)
	}
	// The whole ClientHello, in one frame, fills every hole.
	tr.Add(testTime(1), clientPort(0), testServer, sealInitial(Version1, []byte{1, 2, 3, 4}, nil, 1, cryptoFrame(0, msg)))
	if *n != 1 {
		t.Errorf("%d reported; %+v", *n, tr.Stats)
	}
}

// Out of order and overlapping CRYPTO fragments over three packets, as
// Chrome sends them; where copies differ the first wins.
func TestCryptoReassembly(t *testing.T) {
	msg := fakeHello(1500)
	var got []byte
	tr := NewTracker(nil, func(c *ClientHello) { got = append([]byte(nil), c.Message...) })
	dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	bad := append([]byte(nil), msg[600:700]...)
	bad[0] ^= 0xff
	pkts := [][]byte{
		append(cryptoFrame(500, msg[500:900]), cryptoFrame(1200, msg[1200:])...),
		append(append(cryptoFrame(600, bad), 0x01, 0x00, 0x00), cryptoFrame(0, msg[:300])...), // a differing copy of held bytes, PING, PADDING
		append(cryptoFrame(250, msg[250:550]), cryptoFrame(850, msg[850:1250])...),
	}
	for i, p := range pkts {
		if got != nil {
			t.Fatalf("reported after %d packets", i)
		}
		tr.Add(testTime(i), testClient, testServer, sealInitial(Version1, dcid, nil, uint32(i), p))
	}
	if string(got) != string(msg) {
		t.Errorf("reassembled %d bytes differ", len(got))
	}
}

// A packet with a frame an Initial may not carry is not trusted at all:
// its CRYPTO frame is not used.
func TestFrameNotAllowed(t *testing.T) {
	tr, n := countingTracker(nil)
	stream := []byte{0x08, 0x00, 0x00} // STREAM
	tr.Add(testTime(0), testClient, testServer, sealInitial(Version1, []byte{1, 2, 3, 4}, nil, 0, append(cryptoFrame(0, fakeHello(50)), stream...)))
	if *n != 0 || tr.Stats.Malformed != 1 {
		t.Errorf("%d reported, %+v", *n, tr.Stats)
	}
	ack := []byte{frameAck, 10, 0, 1, 2, 1, 3, frameConnClose, 0, 0, 2, 'o', 'k'} // largest 10, first range 2, one range gap 1 length 3
	tr.Add(testTime(1), testClient, testServer, sealInitial(Version1, []byte{1, 2, 3, 4}, nil, 1, append(ack, cryptoFrame(0, fakeHello(50))...)))
	if *n != 1 {
		t.Errorf("%d reported, %+v", *n, tr.Stats)
	}
	// An ACK range below packet number 0.
	ack = []byte{frameAck, 3, 0, 1, 1, 1, 3}
	tr.Add(testTime(2), clientPort(7), testServer, sealInitial(Version1, []byte{1, 2, 3, 9}, nil, 0, append(ack, cryptoFrame(0, fakeHello(50))...)))
	if *n != 1 || tr.Stats.Malformed != 2 {
		t.Errorf("%d reported, %+v", *n, tr.Stats)
	}
}

func TestUnknownVersion(t *testing.T) {
	tr, _ := countingTracker(nil)
	pkt := sealInitial(Version1, []byte{1, 2, 3, 4}, nil, 0, cryptoFrame(0, fakeHello(50)))
	copy(pkt[1:5], []byte{0x0a, 0x1a, 0x2a, 0x3a}) // a greased version
	if IsInitial(pkt) {
		t.Error("IsInitial true for an unknown version")
	}
	tr.Add(testTime(0), testClient, testServer, pkt)
	if tr.Stats.UnknownVersion != 1 || tr.Conns() != 0 {
		t.Errorf("%+v", tr.Stats)
	}
}

func TestPacketNumberDecode(t *testing.T) {
	for _, tc := range []struct {
		largest   int64
		truncated uint64
		bits      int
		want      int64
	}{
		{0xa82f30ea, 0x9b32, 16, 0xa82f9b32}, // RFC 9000 §A.3
		{-1, 0, 8, 0},
		{-1, 2, 32, 2},
		{255, 1, 8, 257},
		{300, 250, 8, 250},
	} {
		if got := decodePacketNumber(tc.largest, tc.truncated, tc.bits); got != tc.want {
			t.Errorf("decode(%#x, %#x, %d) = %#x, want %#x", tc.largest, tc.truncated, tc.bits, got, tc.want)
		}
	}
}

// ConnCost bounds what a connection in progress takes besides its CRYPTO
// buffer: measured over many, with the heap counted before and after.
func TestConnCost(t *testing.T) {
	const n = 2000
	pkts := make([][]byte, n)
	for i := range pkts {
		pkts[i] = partial(i)
	}
	tr, _ := countingTracker(&Options{MaxConns: n, MaxBytes: n * minBuf})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, p := range pkts {
		tr.Add(testTime(0), clientPort(i), testServer, p)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if tr.Conns() != n {
		t.Fatalf("%d conns", tr.Conns())
	}
	per := (int(after.HeapAlloc) - int(before.HeapAlloc) - tr.Buffered()) / n
	t.Logf("%d bytes per connection besides its buffer; ConnCost %d", per, ConnCost)
	if per > ConnCost {
		t.Errorf("%d bytes per connection, over ConnCost %d", per, ConnCost)
	}
	runtime.KeepAlive(tr)
}

// A ClientHello header that claims more than MaxHello (up to 16 MiB) does
// not make the Tracker buffer up to that claim: CRYPTO data past MaxHello
// is not kept, whatever length the message says. One 1,200-byte Initial
// with the header and a CRYPTO frame just below 16 MiB once made a 16 MiB
// buffer (and could evict other connections' data to make room for it).
func TestClaimedHelloOverMaxHello(t *testing.T) {
	tr, n := countingTracker(nil)
	frames := cryptoFrame(0, []byte{1, 0xff, 0xff, 0xff})
	frames = AppendCryptoFrame(frames, 0xffff00, make([]byte, 8))
	pkt := sealInitial(Version1, []byte{9, 9, 9, 9, 9, 9, 9, 9}, []byte{1}, 0, frames)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr.Add(testTime(0), clientPort(0), testServer, pkt)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("%d bytes allocated for one Initial", got)
	}
	if *n != 0 || tr.Stats.NotHello != 1 || tr.Stats.Evicted != 0 || tr.Conns() != 0 || tr.Buffered() != 0 {
		t.Errorf("%d reported, %d conns, %d bytes buffered, %+v", *n, tr.Conns(), tr.Buffered(), tr.Stats)
	}
}

// Connections dropped (evicted at the cap, failed, finished) are reused
// for new ones: with many interleaved two-Initial connections, a few at a
// time, some evicted, and corrupt first Initials between them, every
// ClientHello reported is whole and its connection's own (its length
// names the client port).
func TestConnReuse(t *testing.T) {
	type rep struct {
		port uint16
		n    int
	}
	var got []rep
	tr := NewTracker(&Options{MaxConns: 3}, func(c *ClientHello) {
		got = append(got, rep{c.Client.Port(), len(c.Message)})
	})
	helloLen := func(i int) int { return 600 + i }
	first := func(i int) []byte {
		msg := fakeHello(helloLen(i) - 4)
		return sealInitial(Version1, []byte{byte(i), byte(i >> 8), 7, 7, 7, 7, 7, 7}, []byte{byte(i)}, 0, cryptoFrame(0, msg[:300]))
	}
	second := func(i int) []byte {
		msg := fakeHello(helloLen(i) - 4)
		return sealInitial(Version1, []byte{byte(i), byte(i >> 8), 7, 7, 7, 7, 7, 7}, []byte{byte(i)}, 1, cryptoFrame(300, msg[300:]))
	}
	const n = 300
	want := 0
	for i := 0; i < n; i += 4 {
		// Four connections start, a corrupt one among them; the first
		// is evicted at the cap of 3, and its second Initial not sent.
		for j := i; j < i+4; j++ {
			tr.Add(testTime(j), clientPort(j), testServer, first(j))
		}
		bad := first(i + 1000)
		bad[len(bad)-1] ^= 1
		tr.Add(testTime(i), clientPort(i+1000), testServer, bad)
		for j := i + 1; j < i+4; j++ {
			tr.Add(testTime(j), clientPort(j), testServer, second(j))
		}
		want += 3
	}
	if len(got) != want || tr.Stats.Evicted != n/4 || tr.Stats.AuthFailed != n/4 {
		t.Fatalf("%d reported, want %d; %+v", len(got), want, tr.Stats)
	}
	for _, r := range got {
		if i := int(r.port) - 40000; r.n != helloLen(i) {
			t.Errorf("client port %d: %d-byte ClientHello, want %d", r.port, r.n, helloLen(i))
		}
	}
	if len(tr.spare) > maxFree {
		t.Errorf("%d spare conns", len(tr.spare))
	}
}

// A server's Initial is told from a client's, whether the connection's
// ClientHello is in progress or reported; a datagram from a port no
// connection went to is not looked up the other way, and is a client's.
func TestFromServer(t *testing.T) {
	tr, n := countingTracker(nil)
	server := sealInitial(Version1, []byte{1, 2, 3, 4}, []byte{9, 9, 9, 9}, 0, []byte{frameAck, 0, 0, 0, 0})
	tr.Add(testTime(0), testClient, testServer, partial(1))
	tr.Add(testTime(1), testServer, testClient, server)
	if tr.Stats.FromServer != 1 || tr.Conns() != 1 || tr.Stats.AuthFailed != 0 {
		t.Fatalf("in progress: %+v, %d conns", tr.Stats, tr.Conns())
	}
	tr.Add(testTime(2), testClient, testServer, sealInitial(Version1, []byte{1, 3, 3, 4, 5, 6, 7, 8}, []byte{1}, 1, cryptoFrame(100, fakeHello(996)[100:])))
	tr.Add(testTime(3), testServer, testClient, server)
	if *n != 1 || tr.Stats.FromServer != 2 || tr.Done() != 1 || tr.Stats.AuthFailed != 0 {
		t.Fatalf("reported: %d hellos, %+v", *n, tr.Stats)
	}
	// From the client's port to a port no connection went to: taken as
	// a client's Initial (sealInitial seals with a client's keys: it is
	// followed).
	tr.Add(testTime(4), testClient, clientPort(7), server)
	if tr.Stats.FromServer != 2 || tr.Stats.Conns != 2 || tr.Conns() != 1 {
		t.Errorf("from a client port: %+v, %d conns", tr.Stats, tr.Conns())
	}
}

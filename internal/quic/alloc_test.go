package quic

import (
	"reflect"
	"testing"
)

// No allocation for a datagram that is not QUIC, of a version not
// understood, of a connection already reported, or from the server of one.
func TestAllocations(t *testing.T) {
	tr, _ := countingTracker(nil)
	hello := sealInitial(Version1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1, 2, 3, 4}, 0, cryptoFrame(0, fakeHello(200)))
	tr.Add(testTime(0), testClient, testServer, hello)
	fromServer := sealInitial(Version1, []byte{1, 2, 3, 4}, []byte{9, 9, 9, 9}, 0, []byte{frameAck, 0, 0, 0, 0})
	unknown := append([]byte(nil), hello...)
	copy(unknown[1:5], []byte{0x0a, 0x1a, 0x2a, 0x3a})
	for _, tc := range []struct {
		name string
		data []byte
		from bool // sent by the server
	}{
		{"short header", []byte{0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9}, false},
		{"DNS", []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}, false},
		{"unknown version", unknown, false},
		{"reported connection", hello, false},
		{"its server", fromServer, true},
	} {
		src, dst := testClient, testServer
		if tc.from {
			src, dst = dst, src
		}
		n := testing.AllocsPerRun(200, func() { tr.Add(testTime(1), src, dst, tc.data) })
		if n != 0 {
			t.Errorf("%s: %v allocations per datagram", tc.name, n)
		}
	}
	if tr.Stats.Late == 0 || tr.Stats.FromServer == 0 || tr.Stats.UnknownVersion == 0 {
		t.Errorf("not the paths meant: %+v", tr.Stats)
	}
}

// BenchmarkHello is a whole connection: keys, decryption, one ClientHello.
func BenchmarkHello(b *testing.B) {
	pkts := make([][]byte, 1024)
	for i := range pkts {
		pkts[i] = sealInitial(Version1, []byte{byte(i), byte(i >> 8), 3, 4, 5, 6, 7, 8}, []byte{byte(i)}, 0, cryptoFrame(0, fakeHello(1200)))
	}
	tr, n := countingTracker(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(pkts[0])))
	for i := 0; b.Loop(); i++ {
		tr.Add(testTime(i), clientPort(i), testServer, pkts[i%len(pkts)])
	}
	if *n == 0 {
		b.Fatal("nothing reported")
	}
}

// BenchmarkLate is a datagram of a connection already reported.
func BenchmarkLate(b *testing.B) {
	pkt := sealInitial(Version1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1}, 0, cryptoFrame(0, fakeHello(1200)))
	tr, _ := countingTracker(nil)
	tr.Add(testTime(0), testClient, testServer, pkt)
	b.ReportAllocs()
	for b.Loop() {
		tr.Add(testTime(1), testClient, testServer, pkt)
	}
}

// IsLongHeader tells long header packets of any version from other
// datagrams, and allocates nothing.
func TestIsLongHeader(t *testing.T) {
	hello := sealInitial(Version2, []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{1, 2, 3, 4}, 0, cryptoFrame(0, fakeHello(200)))
	for _, tc := range []struct {
		name string
		data []byte
		v    Version
		ok   bool
	}{
		{"v2 Initial", hello, Version2, true},
		{"unknown version", []byte{0xc0, 0x0a, 0x1a, 0x2a, 0x3a, 0, 0}, 0x0a1a2a3a, true},
		{"version negotiation", []byte{0xc0, 0, 0, 0, 0, 1, 9, 0, 0, 0, 0, 1}, 0, true},
		{"short header", []byte{0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, false},
		{"no fixed bit", []byte{0x80, 0, 0, 0, 1, 0, 0}, 0, false},
		{"DCID past the end", []byte{0xc0, 0, 0, 0, 1, 8, 1, 2}, 0, false},
		{"SCID too long", append([]byte{0xc0, 0, 0, 0, 1, 0, 21}, make([]byte, 21)...), 0, false},
		{"six bytes", []byte{0xc0, 0, 0, 0, 1, 0}, 0, false},
	} {
		v, ok := IsLongHeader(tc.data)
		if v != tc.v || ok != tc.ok {
			t.Errorf("%s: %v %v, want %v %v", tc.name, v, ok, tc.v, tc.ok)
		}
	}
	if n := testing.AllocsPerRun(100, func() { IsLongHeader(hello) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// Stats.Add adds every counter.
func TestStatsAdd(t *testing.T) {
	var a, b Stats
	v := reflect.ValueOf(&b).Elem()
	for i := range v.NumField() {
		v.Field(i).SetUint(uint64(i + 1))
	}
	a.Add(&b)
	a.Add(&b)
	w := reflect.ValueOf(&a).Elem()
	for i := range w.NumField() {
		if got := w.Field(i).Uint(); got != 2*uint64(i+1) {
			t.Errorf("%s: %d, want %d", w.Type().Field(i).Name, got, 2*(i+1))
		}
	}
}

// BenchmarkInitialKeys is HKDF's part of a new connection's keys.
func BenchmarkInitialKeys(b *testing.B) {
	var d kdf
	var key, iv, hp [32]byte
	dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	b.ReportAllocs()
	for b.Loop() {
		d.initialKeys(&key, &iv, &hp, &paramsV1, dcid)
	}
}

// BenchmarkConnCrypto is the cryptography one connection of
// scripts/quicbench's capture costs whatever else is done: its keys
// (HKDF, two AES key schedules, a GCM) and the decryption of its two
// 1,200-byte Initials.
func BenchmarkConnCrypto(b *testing.B) {
	dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	msg := fakeHello(1500)
	var pkts [2][]byte
	var hs [2]header
	for i := range pkts {
		lo, hi := i*1000, min(len(msg), (i+1)*1000)
		pkts[i] = sealInitial(Version1, dcid, []byte{9}, uint32(i), cryptoFrame(lo, msg[lo:hi]))
		if err := parseLong(pkts[i], &hs[i]); err != nil {
			b.Fatal(err)
		}
	}
	var d kdf
	var o opener
	b.ReportAllocs()
	for b.Loop() {
		var k keys
		d.deriveKeys(&k, &paramsV1, dcid)
		for i := range pkts {
			if _, _, err := o.open(&k, pkts[i], &hs[i], int64(i)-1); err != nil {
				b.Fatal(err)
			}
		}
	}
}

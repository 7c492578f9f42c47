package quic

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

var (
	testClient = netip.MustParseAddrPort("192.0.2.10:50000")
	testServer = netip.MustParseAddrPort("192.0.2.1:443")
)

func readHex(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := hex.DecodeString(strings.Join(strings.Fields(string(b)), ""))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// The client Initial keys of RFC 9001 Appendix A.1 and RFC 9369
// Appendix A.1, for the DCID 0x8394c8f03e515708.
func TestInitialSecrets(t *testing.T) {
	dcid := mustHex("8394c8f03e515708")
	for _, tc := range []struct {
		v                   Version
		secret, key, iv, hp string
	}{
		{Version1, "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea",
			"1f369613dd76d5467730efcbe3b1a22d", "fa044b2f42a3fd3b46fb255c", "9f50449e04a0e810283a1e9933adedd2"},
		{Version2, "14ec9d6eb9fd7af83bf5a668bc17a7e283766aade7ecd0891f70f9ff7f4bf47b",
			"8b1a0bc121284290a29e0971b5cd045d", "91f73e2351d8fa91660e909f", "45b95e15235d6f45a6b19cbcb0294ba9"},
	} {
		t.Run(tc.v.String(), func(t *testing.T) {
			p := tc.v.params()
			var d kdf
			var s [32]byte
			d.clientInitialSecret(&s, p, dcid)
			secret := s[:]
			expandLabel := func(secret []byte, label string, n int) []byte {
				var o [32]byte
				d.expandLabel(&o, secret, label, n)
				return o[:n]
			}
			for _, c := range []struct {
				name      string
				got, want []byte
			}{
				{"secret", secret, mustHex(tc.secret)},
				{"key", expandLabel(secret, p.keyLabel, 16), mustHex(tc.key)},
				{"iv", expandLabel(secret, p.ivLabel, 12), mustHex(tc.iv)},
				{"hp", expandLabel(secret, p.hpLabel, 16), mustHex(tc.hp)},
			} {
				if !bytes.Equal(c.got, c.want) {
					t.Errorf("%s %x, want %x", c.name, c.got, c.want)
				}
			}
		})
	}
}

// rfcCrypto is the CRYPTO frame data of the client Initial of RFC 9001
// Appendix A.2 (the same in RFC 9369 Appendix A.2): a ClientHello for
// example.com.
const rfcCrypto = "010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e86804fe3a47f06a2b69484c000004130113" +
	"02010000c000000010000e00000b6578616d706c652e636f6dff01000100000a00080006001d00170018001000070005" +
	"04616c706e000500050100000000003300260024001d00209370b2c9caa47fbabaf4559fedba753de171fa71f50f1ce1" +
	"5d43e994ec74d748002b0003020304000d0010000e0403050306030203080408050806002d00020101001c0002400100" +
	"3900320408ffffffffffffffff05048000ffff07048000ffff0801100104800075300901100f088394c8f03e51570806" +
	"048000ffff"

// The protected client Initials of RFC 9001 A.2 and RFC 9369 A.2, through
// a Tracker: header protection removed, packet number 2, decrypted, the
// CRYPTO frame's ClientHello reported whole.
func TestRFCClientInitial(t *testing.T) {
	for _, tc := range []struct {
		file   string
		v      Version
		header string // unprotected
	}{
		{"rfc9001-a2-client-initial.hex", Version1, "c300000001088394c8f03e5157080000449e00000002"},
		{"rfc9369-a2-client-initial.hex", Version2, "d36b3343cf088394c8f03e5157080000449e00000002"},
	} {
		t.Run(tc.v.String(), func(t *testing.T) {
			pkt := readHex(t, tc.file)
			if !IsInitial(pkt) {
				t.Fatal("IsInitial false")
			}
			var h header
			if err := parseLong(pkt, &h); err != nil {
				t.Fatal(err)
			}
			var k keys
			new(kdf).deriveKeys(&k, h.params, h.dcid)
			var o opener
			payload, pn, err := o.open(&k, pkt, &h, -1)
			if err != nil {
				t.Fatal(err)
			}
			if hdr := o.hdr[:len(tc.header)/2]; pn != 2 || !bytes.Equal(hdr, mustHex(tc.header)) {
				t.Errorf("packet number %d, header %x; want 2, %s", pn, hdr, tc.header)
			}
			if len(payload) != 1200-len(tc.header)/2-16 {
				t.Errorf("payload %d bytes", len(payload))
			}
			var got []*ClientHello
			tr := NewTracker(nil, func(c *ClientHello) { cc := *c; cc.Message = bytes.Clone(c.Message); got = append(got, &cc) })
			tr.Add(time.Unix(1, 0), testClient, testServer, pkt)
			tr.Add(time.Unix(1, 0), testClient, testServer, pkt) // a retransmission: not reported again
			if len(got) != 1 {
				t.Fatalf("%d hellos, want 1; %+v", len(got), tr.Stats)
			}
			if !bytes.Equal(got[0].Message, mustHex(rfcCrypto)) || got[0].Version != tc.v || got[0].Client != testClient || got[0].Server != testServer {
				t.Errorf("got %+v", got[0])
			}
			hello, err := parseTestHello(got[0].Message)
			if err != nil || hello.sni != "example.com" || strings.Join(hello.alpn, ",") != "alpn" {
				t.Errorf("hello %+v, %v", hello, err)
			}
			if s := tr.Stats; s.Decrypted != 1 || s.Late != 1 || s.Hellos != 1 || s.AuthFailed != 0 {
				t.Errorf("stats %+v", s)
			}
			// Any one bit flipped in the protected payload fails authentication.
			bad := bytes.Clone(pkt)
			bad[len(bad)-40] ^= 1
			tr2 := NewTracker(nil, func(*ClientHello) { t.Error("hello from a corrupt packet") })
			tr2.Add(time.Unix(1, 0), testClient, testServer, bad)
			if tr2.Stats.AuthFailed != 1 || tr2.Conns() != 0 {
				t.Errorf("corrupt packet: %+v, %d conns", tr2.Stats, tr2.Conns())
			}
		})
	}
}

// kdf's HKDF-Extract and HKDF-Expand-Label agree with crypto/hkdf's for
// connection IDs of every length.
func TestKDFMatchesHKDF(t *testing.T) {
	var d kdf
	for n := 0; n <= maxCIDLen; n++ {
		dcid := bytes.Repeat([]byte{byte(n * 7)}, n)
		for _, p := range []*versionParams{&paramsV1, &paramsV2, &paramsDraft29, &paramsDraft23} {
			initial, _ := hkdf.Extract(sha256.New, dcid, p.salt)
			for _, tc := range []struct {
				label string
				n     int
			}{{"client in", 32}, {p.keyLabel, 16}, {p.ivLabel, 12}, {p.hpLabel, 16}} {
				info := []byte{0, byte(tc.n), byte(6 + len(tc.label))}
				info = append(append(append(info, "tls13 "...), tc.label...), 0)
				want, _ := hkdf.Expand(sha256.New, initial, string(info), tc.n)
				var got, ext [32]byte
				d.mac(&ext, p.salt, dcid)
				d.expandLabel(&got, ext[:], tc.label, tc.n)
				if !bytes.Equal(got[:tc.n], want) {
					t.Fatalf("dcid %x %s: %x, want %x", dcid, tc.label, got[:tc.n], want)
				}
			}
			// The same through the prepared HMAC keys (the salt's, the
			// secret's) that deriving a connection's keys uses.
			expand := func(secret []byte, label string, n int) []byte {
				info := []byte{0, byte(n), byte(6 + len(label))}
				info = append(append(append(info, "tls13 "...), label...), 0)
				b, _ := hkdf.Expand(sha256.New, secret, string(info), n)
				return b
			}
			client := expand(initial, "client in", 32)
			wants := map[string][]byte{p.keyLabel: expand(client, p.keyLabel, 16), p.ivLabel: expand(client, p.ivLabel, 12), p.hpLabel: expand(client, p.hpLabel, 16)}
			var key, iv, hp [32]byte
			d.initialKeys(&key, &iv, &hp, p, dcid)
			for _, c := range []struct {
				label string
				got   []byte
			}{{p.keyLabel, key[:16]}, {p.ivLabel, iv[:12]}, {p.hpLabel, hp[:16]}} {
				if !bytes.Equal(c.got, wants[c.label]) {
					t.Fatalf("dcid %x: initialKeys %s %x, want %x", dcid, c.label, c.got, wants[c.label])
				}
			}
		}
	}
}

package starttls

import (
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/capture/stream"
)

// hello is the start of a TLS handshake record carrying a ClientHello.
const hello = "\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00"

// tlsSpy is the TLS side: it keeps what it is fed.
type tlsSpy struct{ got []byte }

func (s *tlsSpy) Feed(b []byte, _ int) { s.got = append(s.got, b...) }
func (s *tlsSpy) Gap(int64)            {}
func (s *tlsSpy) End()                 {}
func (s *tlsSpy) Held() int            { return 0 }
func (s *tlsSpy) Shed() bool           { return false }
func (s *tlsSpy) Release()             {}
func (s *tlsSpy) Collect()             {}

// run feeds stream in pieces of n bytes through a parser of framing f and
// returns what TLS was fed and the counts.
func run(f Framing, stream_ string, n int) (string, Stats) {
	var spy *tlsSpy
	c := New(func(h *stream.Handoff, first []byte) stream.Parser {
		if len(first) == 0 || first[0] != 0x16 {
			return nil
		}
		spy = &tlsSpy{}
		return spy
	})
	p := c.Taker(f)(&stream.Handoff{}, []byte(stream_))
	for b := []byte(stream_); len(b) > 0; {
		k := min(n, len(b))
		p.Feed(b[:k], 1<<20)
		b = b[k:]
	}
	p.End()
	p.Collect()
	if spy == nil {
		return "", c.Stats
	}
	return string(spy.got), c.Stats
}

// Each framing walks its protocol's prelude, however the stream is cut,
// and hands TLS exactly the bytes from the handshake record on.
func TestFramings(t *testing.T) {
	started := Stats{Preludes: 1, Started: 1}
	for _, tc := range []struct {
		name    string
		framing Framing
		prelude string
		want    Stats
	}{
		{"smtp", Lines, "EHLO client.example\r\nSTARTTLS\r\n", started},
		{"imap, a line holding the record's first byte", Lines, ". CAPABILITY\r\n\x16\n. STARTTLS\r\n", started},
		{"xmpp", XML, "<?xml version='1.0'?><stream:stream to='chat.example' version='1.0'><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>", started},
		{"ldap, short form", BER, "\x30\x1d\x02\x01\x01\x77\x18\x80\x16" + "1.3.6.1.4.1.1466.20037", started},
		{"ldap, long form", BER, "\x30\x81\x1d\x02\x01\x01\x77\x18\x80\x16" + "1.3.6.1.4.1.1466.20037", started},
		{"postgres", Length4, "\x00\x00\x00\x08\x04\xd2\x16\x2f", started},
		{"mysql", MySQL, "\x20\x00\x00\x01" + strings.Repeat("\x00", 32), started},
		{"rdp", TPKT, "\x03\x00\x00\x13\x0e\xe0\x00\x00\x00\x00\x00\x01\x00\x08\x00\x03\x00\x00\x00", started},
		{"tpkt that is not", TPKT, "\x04\x00\x00\x13", Stats{Preludes: 1, Malformed: 1}},
		{"postgres length below its own", Length4, "\x00\x00\x00\x02", Stats{Preludes: 1, Malformed: 1}},
		{"ber that is not a sequence", BER, "\x04\x01a", Stats{Preludes: 1, Malformed: 1}},
		{"lines past the cap", Lines, strings.Repeat("NOOP\r\n", MaxPrelude/6+1), Stats{Preludes: 1, OverCap: 1}},
		{"one line past the cap", Lines, strings.Repeat("x", MaxPrelude) + "\n", Stats{Preludes: 1, OverCap: 1}},
		{"a length past the cap", MySQL, "\xff\xff\x00\x01" + strings.Repeat("\x00", MaxPrelude), Stats{Preludes: 1, OverCap: 1}},
	} {
		for _, n := range []int{1, 2, 3, 5, 1 << 20} {
			got, st := run(tc.framing, tc.prelude+hello, n)
			want := ""
			if tc.want.Started == 1 {
				want = hello
			}
			if got != want || st != tc.want {
				t.Errorf("%s in pieces of %d: TLS fed %q, want %q; %+v, want %+v", tc.name, n, got, want, st, tc.want)
			}
		}
	}
}

// Any bytes, cut anywhere: no panic, at most MaxPrelude bytes walked
// before TLS or giving up, each stream counted once.
func FuzzPrelude(f *testing.F) {
	f.Add(uint8(Lines), "EHLO x\r\nSTARTTLS\r\n"+hello, uint8(3))
	f.Add(uint8(BER), "\x30\x05\x02\x01\x01\x77\x00"+hello, uint8(1))
	f.Add(uint8(MySQL), "\x20\x00\x00\x01"+strings.Repeat("\x00", 32)+hello, uint8(7))
	f.Fuzz(func(t *testing.T, framing uint8, s string, n uint8) {
		fr := Framing(framing % uint8(numFramings))
		got, st := run(fr, s, int(n)+1)
		if st.Preludes != 1 || st.Started+st.OverCap+st.Malformed > 1 {
			t.Fatalf("counts %+v", st)
		}
		if got != "" && (got[0] != 0x16 || !strings.HasSuffix(s, got) || len(s)-len(got) > MaxPrelude+8) {
			t.Fatalf("TLS fed %q of %q", got, s)
		}
	})
}

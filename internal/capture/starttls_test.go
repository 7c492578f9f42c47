package capture

import (
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/urldedupd/urldedupd/internal/capture/proto/starttls"
)

// starttlsCapture is real traffic made by scripts/make-starttls-captures.sh:
// openssl s_client -starttls (SMTP, IMAP, POP3, FTP, XMPP, LDAP,
// PostgreSQL, MySQL), curl --ssl-reqd (SMTP, IMAP, POP3, FTP), psql with
// sslmode=require and an RDP X.224 negotiation, on their usual ports and
// others, against scripts/starttls-server.py; starttls.records lists the
// record each connection must yield.
const starttlsCapture = "testdata/captures/starttls.pcap"

// Every client's ClientHello after its cleartext prelude is recorded as
// TLS, with its server name and port; each stream is counted by its
// protocol and as a prelude where TLS started.
func TestStartTLSCapture(t *testing.T) {
	b, err := os.ReadFile("testdata/captures/starttls.records")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	got, st := tlsRecords(t, starttlsCapture)
	if !slices.Equal(got, want) {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	n := uint64(len(want))
	if st.StartTLS != (StartTLSStats{Preludes: n, Started: n}) || st.Records[ProtoTLS] != n || st.TLS.Errors != 0 ||
		st.Assembler.ParseErrors != 0 || st.Assembler.Gaps != 0 {
		t.Errorf("starttls %+v, records %v, TLS %+v, assembler %+v", st.StartTLS, st.Records, st.TLS, st.Assembler)
	}
	wantKinds := NonHTTPCounts{StreamSMTP: 3, StreamIMAP: 2, StreamPOP3: 2, StreamFTP: 2, StreamXMPP: 1, StreamLDAP: 2,
		StreamPostgres: 2, StreamMySQL: 1, StreamRDP: 2}
	if st.Assembler.NonHTTP != wantKinds {
		t.Errorf("streams by kind %v, want %v", st.Assembler.NonHTTP, wantKinds)
	}
	// Without TLS selected the preludes are only counted by kind.
	got, st = replayProtos(t, 1<<ProtoHTTP, starttlsCapture)
	if len(got) != 0 || st.StartTLS != (StartTLSStats{}) || st.Assembler.NonHTTP != wantKinds {
		t.Errorf("without tls: %q, starttls %+v, kinds %v", got, st.StartTLS, st.Assembler.NonHTTP)
	}
}

// tshark reads the same server names on the same ports, but for RDP on
// 3389, where its RDP dissector keeps the bytes after the X.224
// negotiation (on another port it finds that ClientHello by its TLS
// heuristic).
func TestStartTLSTsharkAgrees(t *testing.T) {
	out, err := exec.Command("tshark", "-r", starttlsCapture, "-Y", "tls.handshake.type==1", "-T", "fields",
		"-e", "tls.handshake.extensions_server_name", "-e", "tcp.dstport").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var fromTshark []string
	for l := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Fields(l)
		if len(f) == 2 {
			fromTshark = append(fromTshark, "tls https://"+f[0]+":"+f[1]+"/")
		}
	}
	got, _ := tlsRecords(t, starttlsCapture)
	var want []string
	for _, g := range got {
		if !strings.HasSuffix(g, ":3389/") {
			want = append(want, g)
		}
	}
	sort.Strings(fromTshark)
	sort.Strings(want)
	if len(want) != len(got)-1 || !slices.Equal(fromTshark, want) {
		t.Errorf("tshark\n%s\nurldedupd (but RDP on 3389)\n%s", strings.Join(fromTshark, "\n"), strings.Join(want, "\n"))
	}
}

// Preludes that end in no TLS are given up, each counted once by its
// reason: a plain SMTP session past MaxPrelude; an LDAP element, after a
// first one, whose length is indefinite (not LDAP's framing); bytes lost in a PostgreSQL prelude. None is
// recorded, and none keeps its stream's bytes.
func TestStartTLSGivenUp(t *testing.T) {
	s := netip.MustParseAddrPort("192.0.2.1:25")
	body := "EHLO client.example\r\nMAIL FROM:<a@example>\r\nRCPT TO:<b@example>\r\nDATA\r\n" +
		strings.Repeat("a line of a long mail that is sent in clear\r\n", starttls.MaxPrelude/40)
	for _, tc := range []struct {
		name    string
		port    uint16
		stream  string
		lose    bool // a hole after the first segment
		want    StartTLSStats
		kind    StreamKind
		records int
	}{
		{"smtp without STARTTLS", 25, body, false, StartTLSStats{Preludes: 1, OverCap: 1}, StreamSMTP, 0},
		{"smtp, TLS past the cap", 25, body + "STARTTLS\r\n\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00", false, StartTLSStats{Preludes: 1, OverCap: 1}, StreamSMTP, 0},
		{"ldap, then an indefinite length", 389, "\x30\x05\x02\x01\x01\x77\x00" + "\x30\x80\x02\x01\x02\x77\x00\x00\x00", false, StartTLSStats{Preludes: 1, Malformed: 1}, StreamLDAP, 0},
		{"postgres with a hole", 5432, "\x00\x00\x00\x08\x04\xd2\x16\x2f", true, StartTLSStats{Preludes: 1, Malformed: 1}, StreamPostgres, 0},
		{"postgres, a short plain session", 5432, "\x00\x00\x00\x08\x04\xd2\x16\x2f\x00\x00\x00\x09\x00\x03\x00\x00\x00", false, StartTLSStats{Preludes: 1}, StreamPostgres, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dst := netip.MustParseAddrPort("192.0.2.10:40000"), netip.AddrPortFrom(s.Addr(), tc.port)
			records := 0
			e := NewEngine(nil, func(*Request) { records++ })
			seq := uint32(101)
			e.Packet(&Packet{Data: frame(t, linkEth, tcpSeg{src: c, dst: dst, seq: 100, syn: true}), Link: layers.LinkTypeEthernet})
			for i, chunk := range chunks([]byte(tc.stream), 1400) {
				e.Packet(&Packet{Data: frame(t, linkEth, tcpSeg{src: c, dst: dst, seq: seq, ack: true, payload: string(chunk)}), Link: layers.LinkTypeEthernet})
				seq += uint32(len(chunk))
				if tc.lose && i == 0 {
					seq += 1000 // the next segment comes after a hole
					e.Packet(&Packet{Data: frame(t, linkEth, tcpSeg{src: c, dst: dst, seq: seq, ack: true, payload: "\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00"}), Link: layers.LinkTypeEthernet})
				}
			}
			e.asm.Flush()
			st := e.Stats()
			if st.StartTLS != tc.want || records != tc.records || st.Assembler.NonHTTP[tc.kind] != 1 {
				t.Errorf("starttls %+v want %+v; %d records; kinds %v", st.StartTLS, tc.want, records, st.Assembler.NonHTTP)
			}
		})
	}
}

// chunks cuts b into pieces of at most n bytes.
func chunks(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		k := min(n, len(b))
		out = append(out, b[:k])
		b = b[k:]
	}
	return out
}

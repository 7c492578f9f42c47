package capture

import (
	"context"
	"github.com/urldedupd/urldedupd/internal/capture/record"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tlsCapture is real traffic made by scripts/make-tls-captures.sh: curl
// (TLS 1.3 and 1.2, without SNI, over IPv6) and Go's crypto/tls (a
// ClientHello of two segments; ECH) against Go and openssl servers on 443
// and odd ports; tls.records lists what it must yield.
const tlsCapture = "testdata/captures/tls.pcap"

// tlsRecords replays path and returns "tls URL[ ech]" per record.
func tlsRecords(t *testing.T, path string) ([]string, Stats) {
	t.Helper()
	src, err := OpenFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	e := NewEngine(nil, func(r *Request) {
		s := r.Proto.String() + " " + string(r.Method) + string(r.URL)
		if r.Hello.ECH {
			s += " ech"
		}
		got = append(got, s)
	})
	if err := e.Run(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	return got, e.Stats()
}

func TestTLSCommittedCapture(t *testing.T) {
	b, err := os.ReadFile("testdata/captures/tls.records")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	got, st := tlsRecords(t, tlsCapture)
	if !slices.Equal(got, want) {
		t.Errorf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st.Records[ProtoTLS] != uint64(len(want)) || st.TLS.NoSNI != 1 || st.TLS.ECH != 1 || st.TLS.Errors != 0 ||
		st.Assembler.Gaps != 0 || st.Assembler.ParseErrors != 0 {
		t.Errorf("stats: records %v, TLS %+v, assembler %+v", st.Records, st.TLS, st.Assembler)
	}
}

// tshark reads the same ClientHellos (decoding the odd ports as TLS): its
// server names, and the server addresses and ports, make the same URLs,
// and it sees an encrypted_client_hello extension (0xfe0d = 65037) in the
// same hellos. No difference to justify.
func TestTLSCaptureAgainstTshark(t *testing.T) {
	out, err := exec.Command("tshark", "-r", tlsCapture, "-d", "tcp.port==4433,tls", "-d", "tcp.port==8443,tls",
		"-Y", "tls.handshake.type==1", "-T", "fields", "-E", "separator=|",
		"-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport", "-e", "tls.handshake.extensions_server_name",
		"-e", "tls.handshake.extension.type").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var want []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 5 {
			t.Fatalf("tshark line %q", line)
		}
		port, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("tshark port %q", f[2])
		}
		addr, err := netip.ParseAddr(f[0] + f[1])
		if err != nil {
			t.Fatalf("tshark address %q", f[0]+f[1])
		}
		u := string(record.AppendHTTPSURL(nil, []byte(f[3]), netip.AddrPortFrom(addr, uint16(port))))
		rec := "tls " + u
		if slices.Contains(strings.Split(f[4], ","), "65037") {
			rec += " ech"
		}
		want = append(want, rec)
	}
	got, _ := tlsRecords(t, tlsCapture)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("urldedupd\n%s\ntshark\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

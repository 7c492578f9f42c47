package capture

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// quicCaptures are internal/quic's committed captures of quic-go exchanges
// (v1, v2, a ClientHello over two Initials, a Retry, a version
// negotiation, two connections from one socket); next to each,
// NAME.jsonl is what `replay --json` prints for it (cmd/urldedupd's
// TestReplayQUIC compares the output byte for byte).
func quicCaptures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "quic", "testdata", "quicgo-*.pcap"))
	if err != nil || len(paths) < 6 {
		t.Fatalf("QUIC captures: %v %q", err, paths)
	}
	return paths
}

// Each QUIC capture gives the records of its NAME.jsonl, in order (their
// URL, server name, client and server), counted as quic with nothing
// failing authentication, malformed or unparsed; Protos without quic
// records nothing from them and reads no datagram as QUIC. (Moved from
// cmd/urldedupd's TestReplayQUIC, which keeps what is the CLI's: the
// output format, the state, --proto.)
func TestQUICCaptures(t *testing.T) {
	for _, pcap := range quicCaptures(t) {
		t.Run(strings.TrimSuffix(filepath.Base(pcap), ".pcap"), func(t *testing.T) {
			f, err := os.Open(strings.TrimSuffix(pcap, ".pcap") + ".jsonl")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var want []string
			for sc := bufio.NewScanner(f); sc.Scan(); {
				var r struct{ Src, Dst, Proto, URL, SNI string }
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Proto != "quic" {
					t.Fatalf("%q: %v", sc.Text(), err)
				}
				want = append(want, r.Src+" "+r.Dst+" "+r.URL+" "+r.SNI)
			}
			var got []string
			st := runEngine(t, nil, pcap, func(r *Request) {
				if r.Proto != ProtoQUIC {
					t.Errorf("record %+v", r)
				}
				got = append(got, r.Src.String()+" "+r.Dst.String()+" "+string(r.URL)+" "+string(r.Hello.ServerName))
			})
			n := uint64(len(got))
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("records\n%q\nwant\n%q", got, want)
			}
			if st.Records[ProtoQUIC] != n || st.QUIC.Hellos != n || st.QUIC.AuthFailed != 0 || st.QUIC.Malformed != 0 || st.QUIC.Errors != 0 {
				t.Errorf("%d records, stats %+v %+v", n, st.Records, st.QUIC)
			}
			got = got[:0]
			opts := &Options{Protos: 1<<ProtoHTTP | 1<<ProtoTLS | 1<<ProtoH2C}
			st = runEngine(t, opts, pcap, func(r *Request) { got = append(got, string(r.URL)) })
			if len(got) != 0 || st.Records[ProtoQUIC] != 0 || st.QUIC.Datagrams != 0 {
				t.Errorf("without quic: records %q, stats %+v %+v", got, st.Records, st.QUIC)
			}
		})
	}
}

// tshark, which derives the Initial keys and decrypts the ClientHellos
// itself, finds the server names the Engine records. It shows every
// ClientHello it decrypts, the ones a client sends again after a Retry or
// a version negotiation too (the same connection, recorded once): its
// distinct names in order are compared. (Moved from cmd/urldedupd's
// TestReplayQUICTshark.)
func TestQUICTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is needed (make test installs it): ", err)
	}
	for _, pcap := range quicCaptures(t) {
		out, err := exec.Command("tshark", "-n", "-r", pcap, "-Y", "quic && tls.handshake.type==1",
			"-T", "fields", "-e", "tls.handshake.extensions_server_name").Output()
		if err != nil {
			t.Fatalf("tshark %s: %v", pcap, err)
		}
		var theirs []string
		for _, l := range strings.Fields(string(out)) {
			if len(theirs) == 0 || theirs[len(theirs)-1] != l {
				theirs = append(theirs, l)
			}
		}
		var ours []string
		runEngine(t, nil, pcap, func(r *Request) {
			if r.Proto != ProtoQUIC {
				t.Fatalf("%s: record %+v", pcap, r)
			}
			ours = append(ours, string(r.Hello.ServerName))
		})
		if len(ours) == 0 || !slices.Equal(ours, theirs) {
			t.Errorf("%s: names %q, tshark %q", pcap, ours, theirs)
		}
	}
}

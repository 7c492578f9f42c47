package capture

import (
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/tsharktest"
)

// captureTable says, for a committed capture, how tshark must be told to
// read it and where urldedupd and tshark justly differ. A capture not in
// the table is read with no -d and must agree exactly.
var captureTable = map[string]struct {
	decodeAs []string // tshark -d, for odd ports and tunnels
	prefs    []string // tshark -o, its preferences (heuristics)
	// differences: requests only urldedupd reports ("+METHOD URL") or only
	// tshark ("-METHOD URL"), each with the reason it is right.
	differences map[string]string
	// noHTTP, when set, says why the capture holds no HTTP/1.x request
	// at all (both must then find none).
	noHTTP string
}{
	// Made by scripts/make-captures.sh (curl to python's http.server on
	// 8080, which tshark's heuristics read as HTTP): no difference.
	"internal/capture/testdata/captures/http.pcap":     {},
	"internal/capture/testdata/captures/http-any.pcap": {},
	// Made by scripts/make-tls-captures.sh: TLS ClientHellos only;
	// TestTLSCaptureAgainstTshark checks their server names.
	"internal/capture/testdata/captures/tls.pcap": {noHTTP: "TLS only"},
	// Made by scripts/make-h2c-captures.sh: cleartext HTTP/2 with prior
	// knowledge only; TestH2CTsharkAgrees checks its requests against
	// tshark's http2 fields.
	"internal/capture/testdata/captures/h2c-prior.pcap": {noHTTP: "h2c with prior knowledge only"},
	// The same script: HTTP/1.1 requests with "Upgrade: h2c", accepted on
	// 8082 (the HTTP/2 requests after them are h2c records, checked by
	// TestH2CTsharkAgrees) and declined on 8083: no difference.
	"internal/capture/testdata/captures/h2c-upgrade.pcap": {decodeAs: []string{"tcp.port==8082,http", "tcp.port==8083,http"}},
	// Made by scripts/make-h2c-connect-capture.sh: CONNECTs through
	// tinyproxy, h2c, TLS and HTTP/1.1 inside; TestH2CInsideConnect checks
	// the h2c requests against tshark's http2 fields. No difference.
	"internal/capture/testdata/captures/h2c-connect.pcap": {},
	// Made by scripts/make-starttls-captures.sh: TLS after a cleartext
	// prelude only; TestStartTLSTsharkAgrees checks the server names.
	"internal/capture/testdata/captures/starttls.pcap": {noHTTP: "STARTTLS only"},
	// Made by scripts/make-vxlan-capture.sh: the kernel's VXLAN on port
	// 9999, found by content; tshark must be told the port.
	"internal/capture/testdata/captures/vxlan-9999.pcap": {decodeAs: []string{"udp.port==9999,vxlan"}},
	// Made by scripts/make-teredo-capture.sh: Teredo between two miredo
	// clients' ephemeral ports, found by content; tshark reads it with its
	// Teredo heuristic on.
	"internal/capture/testdata/captures/teredo.pcap": {prefs: []string{"teredo.heuristic_teredo:TRUE"}},
	// FoxIO's JA4 reference captures (internal/ja4/testdata): TLS and
	// QUIC ClientHellos only; TestReferenceCaptures checks their JA4.
	"internal/ja4/testdata/https3-301-get.pcap":                 {noHTTP: "TLS and QUIC only"},
	"internal/ja4/testdata/quic-tls-handshake.pcapng":           {noHTTP: "TLS and QUIC only"},
	"internal/ja4/testdata/quic-with-several-tls-frames.pcapng": {noHTTP: "TLS and QUIC only"},
	"internal/ja4/testdata/tls-alpn-h2.pcap":                    {noHTTP: "TLS and QUIC only"},
	"internal/ja4/testdata/tls-non-ascii-alpn.pcapng":           {noHTTP: "TLS and QUIC only"},
	"internal/ja4/testdata/tls-sni.pcapng":                      {noHTTP: "TLS and QUIC only"},
	"internal/ja4/testdata/tls12.pcap":                          {noHTTP: "TLS and QUIC only"},
	// Made by internal/quic's TestQuicGo (QUIC_WRITE_CAPTURES=1): QUIC only;
	// TestQUICTshark checks their server names.
	"internal/quic/testdata/quicgo-retry.pcap":               {noHTTP: "QUIC only"},
	"internal/quic/testdata/quicgo-two-connections.pcap":     {noHTTP: "QUIC only"},
	"internal/quic/testdata/quicgo-v1-two-initials.pcap":     {noHTTP: "QUIC only"},
	"internal/quic/testdata/quicgo-v1.pcap":                  {noHTTP: "QUIC only"},
	"internal/quic/testdata/quicgo-v2.pcap":                  {noHTTP: "QUIC only"},
	"internal/quic/testdata/quicgo-version-negotiation.pcap": {noHTTP: "QUIC only"},
}

// Every capture committed to the repository (git ls-files), run through
// an Engine (every HTTP/1.x record) and read by tshark (-Y http.request;
// the TLS, QUIC and h2c records are checked against tshark's fields for
// them in TestTLSCaptureAgainstTshark and the like): the same requests,
// method and URL, as multisets. A difference fails unless captureTable
// explains it; an explained difference that no longer occurs fails too,
// so that the table stays true. (Moved from cmd/urldedupd, where each
// capture was replayed into a state of its own.)
func TestEveryCaptureAgreesWithTshark(t *testing.T) {
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "*.pcap", "*.pcapng", "*.pcap.gz", "*.pcapng.gz", "*.cap").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) == 0 {
		t.Fatal("no committed capture found")
	}
	for name := range captureTable {
		if !slices.Contains(files, name) {
			t.Errorf("captureTable names %s, which is not committed", name)
		}
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(root, name)
			entry := captureTable[name]
			fromTshark := tsharktest.RequestsWith(t, path, entry.prefs, entry.decodeAs...)
			var got []string
			runEngine(t, nil, path, func(r *Request) {
				if r.Proto != ProtoHTTP { // TLS, QUIC and h2c records: checked against tshark's own fields by their tests
					return
				}
				got = append(got, string(r.Method)+" "+string(r.URL)) // a CONNECT's: its authority, as tshark's full_uri is
			})
			sort.Strings(got)
			diff := map[string]bool{}
			for _, d := range multisetDiff(got, fromTshark, "+") {
				diff[d] = true
			}
			for _, d := range multisetDiff(fromTshark, got, "-") {
				diff[d] = true
			}
			for d := range diff {
				if entry.differences[d] == "" {
					t.Errorf("unexplained: %s (+ urldedupd only, - tshark only)", d)
				}
			}
			for d := range entry.differences {
				if !diff[d] {
					t.Errorf("the table explains %s, which no longer differs", d)
				}
			}
			if len(got) == 0 && len(fromTshark) == 0 && entry.noHTTP == "" {
				t.Errorf("neither finds a request: the comparison tests nothing")
			}
			if entry.noHTTP != "" && len(got)+len(fromTshark) > 0 {
				t.Errorf("the table says %q, but %d and %d requests were found", entry.noHTTP, len(got), len(fromTshark))
			}
		})
	}
}

// multisetDiff returns the items of a, with their repeats, that b does not
// have as many times, each prefixed with sign.
func multisetDiff(a, b []string, sign string) []string {
	n := map[string]int{}
	for _, s := range b {
		n[s]++
	}
	var d []string
	for _, s := range a {
		if n[s] > 0 {
			n[s]--
			continue
		}
		d = append(d, sign+s)
	}
	return d
}

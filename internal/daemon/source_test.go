package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// panicAt is a real capture source that panics once, when asked for its
// at-th frame: a stand-in for any bug a frame could still reach.
type panicAt struct {
	capture.Source
	n, at, times int // panics times calls in a row from the at-th (1 if 0)
}

func (p *panicAt) Next(pk *capture.Packet) error {
	if p.n++; p.n >= p.at && p.n < p.at+max(p.times, 1) {
		panic("injected at frame 100")
	}
	return p.Source.Next(pk)
}

// A panic while the source runs drops its engine, is counted and logged
// with the interface, and capture goes on with the next frame, its
// figures continuing those before.
func TestSourceSurvivesPanic(t *testing.T) {
	var logged bytes.Buffer
	s, events := runPanicking(t, 1, slog.NewJSONHandler(&logged, nil))

	st, cnt, _ := s.snapshot()
	// The engine recovers a panic in its packet loop (st.Panics); the
	// source recovers one that escapes the engine (s.panics).
	if n := st.Panics + s.panics.Load(); n != 1 {
		t.Fatalf("%d panics counted, want 1", n)
	}
	if st.Packets != 189 || cnt.Requests == 0 {
		t.Fatalf("after the panic: %d packets (want all 189), %d requests", st.Packets, cnt.Requests)
	}
	var urls []string
	for _, l := range readLines(t, events.path) {
		var r struct{ URL string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("event %q: %v", l, err)
		}
		urls = append(urls, r.URL)
	}
	if !slices.Contains(urls, "http://raw.example:8080/item/7") || len(urls) > 25 {
		t.Fatalf("events: %q; want the file's last request among at most 25", urls)
	}
	for _, want := range []string{`"iface":"veth-test"`, `injected at frame 100`, `capture goes on`} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logged.String())
		}
	}
}

// Deciding and logging a captured request allocates nothing.
func TestRecorderAllocs(t *testing.T) {
	dir, err := state.Open(context.Background(), filepath.Join(t.TempDir(), "state"), &state.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	events, err := OpenEventLog(filepath.Join(t.TempDir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	signer := signature.NewSigner(signature.IEEE, signature.Safe)
	rec := newRecorder(func() *audit.Log { return audit.New(dir, signer, events, audit.NewJSON, false, nil) },
		"test", slog.New(slog.DiscardHandler))
	req := &capture.Request{Method: []byte("GET"), URL: []byte("http://alloc.example/x")}
	if n := testing.AllocsPerRun(10000, func() { rec.Request(req) }); n != 0 {
		t.Fatalf("%v allocations per request", n)
	}
	if c := rec.Counts(); c.Requests != 10001 || c.New != 1 {
		t.Fatalf("counts %+v", c)
	}
}

// Two panics in a row with no frame between them make the engine give up
// (it will not spin on a source that keeps panicking); the source starts
// a new engine after a pause and reads on: capture stops only when the
// interface does. Before, the source ended there and was marked down.
func TestSourceRestartsAfterRepeatedPanics(t *testing.T) {
	s, _ := runPanicking(t, 2, slog.DiscardHandler)
	st, cnt, _ := s.snapshot()
	if n := st.Panics + s.panics.Load(); n != 2 {
		t.Errorf("%d panics counted, want 2", n)
	}
	if st.Packets != 189 || cnt.Requests == 0 {
		t.Fatalf("after two panics in a row: %d packets (want all 189), %d requests", st.Packets, cnt.Requests)
	}
}

// runPanicking runs a source over the committed capture, panicking at its
// 100th frame times times in a row, on a new state; it returns the source
// and its event log, closed.
func runPanicking(t *testing.T, times int, h slog.Handler) (*source, *EventLog) {
	t.Helper()
	files, err := capture.OpenFiles("../capture/testdata/captures/http.pcap")
	if err != nil {
		t.Fatal(err)
	}
	dir, events := stateAndLog(t)
	s := &source{cfg: SourceConfig{Iface: "veth-test"}, live: &panicAt{Source: files, at: 100, times: times}}
	s.run(context.Background(), dir, events, audit.NewJSON, &capture.Options{}, slog.New(h))
	events.Close()
	return s, events
}

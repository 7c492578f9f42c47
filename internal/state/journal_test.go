package state_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/journal"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/statetest"
	"github.com/urldedupd/urldedupd/internal/window"
)

func journalFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, journal.Dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestJournalWhen: who keeps a journal. A writable open with a flush
// interval does (two files while it is open, none after Close, which
// synced the shards); a negative Checkpoint, no flush interval, a
// read-only open or a windowed layout do not.
func TestJournalWhen(t *testing.T) {
	keyed := format.Spec{Layout: format.Keyed, Algorithm: signature.SipHash, Mode: signature.Safe}
	win := format.Spec{Layout: format.KeyedWindow, Algorithm: signature.SipHash, Mode: signature.Safe}
	tests := []struct {
		name     string
		spec     format.Spec
		opts     state.Options
		journals bool
	}{
		{"flush", keyed, state.Options{Local: shardfile.Options{FlushInterval: time.Hour}}, true},
		{"flush, checkpoint -1", keyed, state.Options{Checkpoint: -1, Local: shardfile.Options{FlushInterval: time.Hour}}, false},
		{"no flush", keyed, state.Options{}, false},
		{"read-only", keyed, state.Options{ReadOnly: true, Local: shardfile.Options{FlushInterval: time.Hour}}, false},
		{"windowed", win, state.Options{Local: shardfile.Options{FlushInterval: time.Hour}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := state.Init{Spec: tt.spec, Size: 2 << 20 * 256}
			if tt.spec.Layout == format.KeyedWindow {
				in.Window = window.Spec{Window: 4 * time.Hour, Generations: 4, Policy: window.FirstSeen}
				in.Size = 0
			}
			m, err := in.Meta(time.Now())
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "s")
			ctx := context.Background()
			mk, err := state.Open(ctx, dir, &state.Options{Create: true, New: &m})
			if err != nil {
				t.Fatal(err)
			}
			mk.Close()
			st, err := state.Open(ctx, dir, &tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.opts.ReadOnly {
				sigs, seen := []signature.Signature{1, 2, 3}, make([]bool, 3)
				if err := st.Decide(ctx, sigs, seen, false); err != nil {
					t.Fatal(err)
				}
				if err := st.Sync(); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(journalFiles(t, dir)); (n == 2) != tt.journals || (n != 0 && n != 2) {
				t.Errorf("%d journal files while open; journals: %v", n, tt.journals)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if n := len(journalFiles(t, dir)); n != 0 {
				t.Errorf("%d journal files after Close", n)
			}
		})
	}
}

// TestJournalUnreplayedWarns: a read-only open of a state whose journal
// holds decisions of a process that is gone warns, and replays nothing; a
// writable open replays it and says how much.
func TestJournalUnreplayedWarns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	ctx := context.Background()
	st, err := state.Open(ctx, dir, &state.Options{Create: true, Local: shardfile.Options{FlushInterval: time.Hour, NoCloseSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	sigs, seen := []signature.Signature{10, 20}, make([]bool, 2)
	if err := st.Decide(ctx, sigs, seen, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil { // NoCloseSync: the journal stays for the next open
		t.Fatal(err)
	}
	var warned []error
	warn := func(err error) { warned = append(warned, err) }
	ro, err := state.Open(ctx, dir, &state.Options{ReadOnly: true, Local: shardfile.Options{Warn: warn}})
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	if len(warned) != 1 || !errors.Is(warned[0], journal.ErrUnreplayed) {
		t.Fatalf("read-only open warned %v, want ErrUnreplayed", warned)
	}
	rw, err := state.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if r := rw.Replayed(); r.Writers != 1 || r.Sigs != 2 {
		t.Fatalf("Replayed %+v, want 1 writer and 2 URLs", r)
	}
	if n := len(journalFiles(t, dir)); n != 0 {
		t.Fatalf("%d journal files after the replay", n)
	}
	if err := rw.Decide(ctx, sigs, seen, true); err != nil || !seen[0] || !seen[1] {
		t.Fatalf("after the replay: seen %v, %v", seen, err)
	}
}

// BenchmarkDecideFlushed: single URLs and batches of 100 through a keyed
// state flushed every 100 ms, with the journal and without (every flush
// syncs the shards), on new random signatures, so that every flush finds
// pages changed all over the state.
func BenchmarkDecideFlushed(b *testing.B) {
	for _, batch := range []int{1, 100} {
		for _, cp := range []time.Duration{0, -1} {
			name := fmt.Sprintf("batch=%d/journal", batch)
			if cp < 0 {
				name = fmt.Sprintf("batch=%d/msync", batch)
			}
			b.Run(name, func(b *testing.B) {
				dir := filepath.Join(b.TempDir(), "s")
				m, err := state.Init{Spec: format.Spec{Layout: format.Keyed, Algorithm: signature.SipHash, Mode: signature.Safe}}.Meta(time.Now())
				if err != nil {
					b.Fatal(err)
				}
				st, err := state.Open(context.Background(), dir, &state.Options{Create: true, New: &m, Checkpoint: cp,
					Local: shardfile.Options{FlushInterval: 100 * time.Millisecond}})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				sigs := make([]signature.Signature, batch)
				x := uint64(0x9e3779b97f4a7c15)
				seen := make([]bool, batch)
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					for i := range sigs { // xorshift: new URLs all over the state
						x ^= x << 13
						x ^= x >> 7
						x ^= x << 17
						sigs[i] = signature.Signature(x)
					}
					if err := st.Decide(ctx, sigs, seen, false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestJournalReplaysEveryLayout: on every layout that journals, a power
// loss after the journal was synced loses nothing. A state is made and its
// disk taken; a process answers 500 URLs new with the journal synced and
// exits without syncing its shards; the shards are put back as the disk
// had them. Read-only, the loss shows (the URLs answer new); a writable
// open replays the journal, and then every one of them is a duplicate
// (none would be new twice) while 500 URLs never decided stay new (none
// lost to a false duplicate).
func TestJournalReplaysEveryLayout(t *testing.T) {
	// One goroutine decides; the background flush never ticks (1 h). What
	// costs is reading the shards for the disk image, 5–30× slower under
	// the race detector, which has nothing to watch here.
	racetest.SkipSequential(t)
	for _, name := range statetest.Layouts() {
		if strings.HasSuffix(name, "-window") {
			continue // the windowed layouts keep no journal (TestJournalWhen)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := statetest.Meta(t, name)
			dir := filepath.Join(t.TempDir(), "s")
			ctx := context.Background()
			mk, err := state.Open(ctx, dir, &state.Options{Create: true, Spec: &m.Spec, New: &m})
			if err != nil {
				t.Fatal(err)
			}
			mk.Close()
			disk := statetest.TakeDisk(t, dir)

			decided, never := make([]signature.Signature, 500), make([]signature.Signature, 500)
			signer := mk.Signer()
			for i := range decided {
				decided[i], _ = signer.Sign(fmt.Appendf(nil, "http://replay.example/%s/decided/%d", name, i))
				never[i], _ = signer.Sign(fmt.Appendf(nil, "http://replay.example/%s/never/%d", name, i))
			}
			answers := func(st *state.State, sigs []signature.Signature) (news int) {
				t.Helper()
				seen := make([]bool, len(sigs))
				if err := st.Decide(ctx, sigs, seen, true); err != nil {
					t.Fatal(err)
				}
				for _, s := range seen {
					if !s {
						news++
					}
				}
				return news
			}

			st, err := state.Open(ctx, dir, &state.Options{Local: shardfile.Options{FlushInterval: time.Hour, NoCloseSync: true}})
			if err != nil {
				t.Fatal(err)
			}
			seen := make([]bool, len(decided))
			if err := st.Decide(ctx, decided, seen, false); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(seen, true) {
				t.Fatalf("a URL of a fresh state answered duplicate")
			}
			if err := st.Sync(); err != nil { // the journal, not the shards
				t.Fatal(err)
			}
			if err := st.Close(); err != nil { // NoCloseSync: the shards stay unsynced
				t.Fatal(err)
			}
			if disk.Restore(t, dir) == 0 {
				t.Fatal("putting the disk back changed no page")
			}

			ro, err := state.Open(ctx, dir, &state.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			lostToPower := answers(ro, decided)
			ro.Close()
			if lostToPower != len(decided) {
				t.Fatalf("before the replay %d of %d URLs answer new: the power loss was not played", lostToPower, len(decided))
			}

			rw, err := state.Open(ctx, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rw.Close()
			if r := rw.Replayed(); r.Sigs != len(decided) {
				t.Errorf("replayed %+v, want %d URLs", r, len(decided))
			}
			twice, lost := answers(rw, decided), len(never)-answers(rw, never)
			if twice != 0 || lost != 0 {
				t.Fatalf("after the replay: %d URLs would be new twice, %d never decided answer duplicate", twice, lost)
			}
		})
	}
}

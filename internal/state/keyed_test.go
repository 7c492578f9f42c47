package state_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

func openKeyed(t *testing.T) *state.State {
	t.Helper()
	st, err := state.Open(context.Background(), filepath.Join(t.TempDir(), "s"), &state.Options{Create: true, New: keyedMeta(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// sigsIn returns n signatures of distinct URLs, signed by st, whose keyed
// hash puts them in shard want.
func sigsIn(st *state.State, want uint8, n int) []signature.Signature {
	signer := st.Signer()
	var out []signature.Signature
	for i := 0; len(out) < n && i < 1_000_000; i++ {
		sig, _ := signer.Sign(fmt.Appendf(nil, "http://shard.example/%d", i))
		if uint8(uint64(sig)>>56) == want {
			out = append(out, sig)
		}
	}
	return out
}

// A keyed shard truncated under an open state makes the calls that touch
// it return shardfile.ErrFault naming the shard, as on the bitmap layout;
// other shards still work.
func TestKeyedTruncatedShardIsAnError(t *testing.T) {
	st := openKeyed(t)
	in3a := sigsIn(st, 0x3a, 1)
	if err := os.Truncate(filepath.Join(st.Dir().Path(), "3a"), 0); err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, 1)
	for _, dry := range []bool{false, true} {
		err := st.Decide(context.Background(), in3a, seen, dry)
		if !errors.Is(err, shardfile.ErrFault) || !strings.Contains(err.Error(), filepath.Join(st.Dir().Path(), "3a")) {
			t.Errorf("Decide(dry %v) = %v, want ErrFault naming 3a", dry, err)
		}
	}
	if _, err := st.Report(context.Background()); !errors.Is(err, shardfile.ErrFault) {
		t.Errorf("Report = %v, want ErrFault", err)
	}
	other := sigsIn(st, 0x3b, 2)
	other = append(other, other[0])
	seen = make([]bool, len(other))
	if err := st.Decide(context.Background(), other, seen, false); err != nil || seen[0] || seen[1] || !seen[2] {
		t.Fatalf("other shards: %v %v", err, seen)
	}
}

// Deciding a batch on a keyed state allocates nothing once warm, like the
// bitmap's. Not under the race detector: its sync.Pool drops one Put in
// four on purpose, and each drop costs the Set's scratch (three
// allocations), so 200 runs count 150 on average and now and then pass
// 200, which AllocsPerRun reports as one a run (make test's race pass
// failed so once). The plain pass checks it.
func TestKeyedDecideNoAllocs(t *testing.T) {
	if racetest.Enabled {
		t.Skip("the race detector's sync.Pool drops pooled scratch on purpose; the plain pass checks this")
	}
	st := openKeyed(t)
	signer := st.Signer()
	sigs := make([]signature.Signature, 512)
	for i := range sigs {
		sigs[i], _ = signer.Sign(fmt.Appendf(nil, "http://alloc.example/%d", i))
	}
	seen := make([]bool, len(sigs))
	ctx := context.Background()
	for _, dry := range []bool{false, true} {
		if n := testing.AllocsPerRun(200, func() { st.Decide(ctx, sigs, seen, dry) }); n != 0 {
			t.Errorf("Decide(dry %v): %v allocs per batch", dry, n)
		}
	}
	url := []byte("http://alloc.example/some/path?q=1")
	if n := testing.AllocsPerRun(1000, func() { signer.Sign(url) }); n != 0 {
		t.Errorf("keyed Sign: %v allocs", n)
	}
}

// The plan: a keyed state sized for 100M URLs at 1e-6 is 1 GiB and keeps
// the plan in its metadata; what cannot be met is ErrPlan, saying why.
func TestInitPlan(t *testing.T) {
	tests := []struct {
		name  string
		in    state.Init
		bytes int64
		err   string
	}{
		{"keyed default", state.Init{Spec: format.KeyedSpec(signature.Safe)}, 512 << 20, ""},
		{"keyed 100M", state.Init{Spec: format.KeyedSpec(signature.Safe), Capacity: 100_000_000, FalseDup: 1e-6}, 1 << 30, ""},
		{"keyed 1B", state.Init{Spec: format.KeyedSpec(signature.Safe), Capacity: 1_000_000_000, FalseDup: 1e-6}, 8 << 30, ""},
		{"keyed sized", state.Init{Spec: format.KeyedSpec(signature.Safe), Size: 8 << 30}, 8 << 30, ""},
		{"keyed too small for plan", state.Init{Spec: format.KeyedSpec(signature.Safe), Size: 512 << 20, Capacity: 1_000_000_000, FalseDup: 1e-6}, 0, "need 8192 MiB"},
		{"keyed impossible", state.Init{Spec: format.KeyedSpec(signature.Safe), Capacity: 1e12, FalseDup: 1e-12}, 0, "cannot be met"},
		{"keyed odd size", state.Init{Spec: format.KeyedSpec(signature.Safe), Size: 768 << 20}, 0, "power of two"},
		{"bitmap 10M at 1%", state.Init{Spec: format.Default, Capacity: 10_000_000, FalseDup: 0.01}, 512 << 20, ""},
		{"bitmap 100M at 1e-6", state.Init{Spec: format.Default, Capacity: 100_000_000, FalseDup: 1e-6}, 0, "keyed layout can"},
		{"bitmap other size", state.Init{Spec: format.Default, Size: 1 << 30}, 0, "layout bitmap is always 512MiB"},
		{"false-dup without capacity", state.Init{Spec: format.Default, FalseDup: 0.1}, 0, "a plan is"},
	}
	for _, tt := range tests {
		m, err := tt.in.Meta(testTime)
		if tt.err != "" {
			if !errors.Is(err, state.ErrPlan) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, want ErrPlan saying %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || m.Sizes.Bytes() != tt.bytes || m.Capacity != tt.in.Capacity {
			t.Errorf("%s: %d bytes, capacity %d, %v; want %d bytes", tt.name, m.Sizes.Bytes(), m.Capacity, err, tt.bytes)
		}
		if keyed := tt.in.Spec.Layout == format.Keyed; keyed != (m.Key != nil && m.KeyID == format.KeyID(*m.Key)) {
			t.Errorf("%s: key %v, key id %q", tt.name, m.Key != nil, m.KeyID)
		}
	}
}

var testTime = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// A keyed state whose shard is full answers a new URL there new without
// storing it, counts it (NotStored) and shows it in its report; its
// repeats are answered new again, never duplicates. Directory and Redis.
func TestKeyedFullShardNotStored(t *testing.T) {
	full := make([]byte, 4<<20) // keyedMeta's shard size
	for i := range full {
		full[i] = 0xee
	}
	addr := redistest.Server(t)
	for _, where := range []string{filepath.Join(t.TempDir(), "s"), addr} {
		st, err := state.Open(context.Background(), where, &state.Options{Create: true, New: keyedMeta(t), Remote: state.RemoteOptions{Prefix: "full"}})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if d := st.Dir(); d != nil {
			copy(d.Shard(0x3a), full)
		} else if err := st.Redis().Client().Set(context.Background(), "full:3a", full, 0).Err(); err != nil {
			t.Fatal(err)
		}
		sigs := sigsIn(st, 0x3a, 3)
		sigs = append(sigs, sigs[0])
		seen := make([]bool, len(sigs))
		for range 2 {
			if err := st.Decide(context.Background(), sigs, seen, false); err != nil {
				t.Fatal(err)
			}
			for i, s := range seen {
				if s {
					t.Fatalf("%s: URL %d in a full shard answered dup", where, i)
				}
			}
		}
		if n := st.NotStored(); n != 8 {
			t.Errorf("%s: NotStored = %d, want 8", where, n)
		}
		rep, err := st.Report(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// One shard of 256 full: full buckets 1/256, not stored (1/256)².
		if want := 1.0 / 256; rep.FullBuckets == nil || *rep.FullBuckets != want || *rep.NotStoredChance != want*want {
			t.Errorf("%s: report %+v, want full buckets %g", where, rep, want)
		}
	}
}

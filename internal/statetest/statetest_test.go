package statetest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// An in-memory state answers exactly as the same state in a directory, for
// every layout, and leaves the same bytes in its shards: a test that uses
// one instead of the other tests the same decisions.
func TestMemoryAnswersAsDirectory(t *testing.T) {
	racetest.SkipSequential(t)
	ctx := context.Background()
	names := statetest.Layouts()
	if len(names) < 5 {
		t.Fatalf("layouts registered: %v", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			m := statetest.Meta(t, name)
			mem := statetest.Memory(t, name)
			dir, err := state.Open(ctx, filepath.Join(t.TempDir(), "s"), &state.Options{Create: true, Spec: &m.Spec, New: &m})
			if err != nil {
				t.Fatal(err)
			}
			defer dir.Close()
			if mem.Meta().Spec != dir.Meta().Spec || mem.Meta().Sizes != dir.Meta().Sizes || mem.Meta().Filter != dir.Meta().Filter {
				t.Fatalf("formats differ: memory %+v, directory %+v", mem.Meta(), dir.Meta())
			}
			// 30,000 URLs, a third of them repeated, in batches of 500,
			// then a dry run over new and old ones.
			signer := mem.Signer()
			var sigs []signature.Signature
			for i := range 30_000 {
				s, _ := signer.Sign(fmt.Appendf(nil, "http://h%d.example/p/%d", i%50, i%20_000))
				sigs = append(sigs, s)
			}
			news := 0
			for _, dryRun := range []bool{false, true} {
				for lo := 0; lo < len(sigs); lo += 500 {
					batch := sigs[lo : lo+500]
					a, b := make([]bool, len(batch)), make([]bool, len(batch))
					if err := mem.Decide(ctx, batch, a, dryRun); err != nil {
						t.Fatal(err)
					}
					if err := dir.Decide(ctx, batch, b, dryRun); err != nil {
						t.Fatal(err)
					}
					for i := range a {
						if a[i] != b[i] {
							t.Fatalf("dry run %v, URL %d: memory says seen=%v, directory %v", dryRun, lo+i, a[i], b[i])
						}
						if !a[i] && !dryRun {
							news++
						}
					}
				}
			}
			if news < 19_000 || news > 20_000 {
				t.Fatalf("%d URLs answered new of 20,000 distinct", news)
			}
			for i := range format.Shards {
				if !bytes.Equal(mem.Dir().Shard(i), dir.Dir().Shard(i)) {
					t.Fatalf("shard %s differs between memory and the directory", format.ShardName(i))
				}
			}
			rm, err := mem.Report(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rd, err := dir.Report(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rm.FillRatio != rd.FillRatio || rm.FalseDupChance != rd.FalseDupChance {
				t.Fatalf("reports differ: memory %+v, directory %+v", rm, rd)
			}
		})
	}
}

// Making an in-memory state writes nothing and costs no zeros: a hundred
// of the default 512 MiB (50 GiB of address space) add less than 64 MiB
// to the process's resident memory.
func TestMemoryIsFree(t *testing.T) {
	before := rss(t)
	for range 100 {
		st := statetest.Bitmap(t)
		if st.Dir().Path() != "" || !st.Dir().InMemory() {
			t.Fatalf("in-memory state has a path %q", st.Dir().Path())
		}
		if err := st.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if grown := rss(t) - before; grown > 64<<20 {
		t.Fatalf("100 in-memory states grew the resident memory by %d MiB", grown>>20)
	}
}

// rss is the process's resident memory (VmRSS), in bytes.
func rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

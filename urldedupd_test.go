package urldedupd_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/urldedupd/urldedupd"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/redistest"
)

// Goroutines and State handles (as separate processes would) deciding
// overlapping batches: every distinct URL is answered new exactly once.
// Lost (never new) and twice (new more than once) are counted apart.
func TestDecideExactlyOnce(t *testing.T) {
	ctx := context.Background()
	places := map[string]string{
		"directory": filepath.Join(t.TempDir(), "state"),
		"redis":     redistest.Server(t),
	}
	for name, where := range places {
		t.Run(name, func(t *testing.T) {
			const distinct, workers, batch = 20_000, 6, 257
			handles := make([]*urldedupd.State, 2)
			for i := range handles {
				s, err := urldedupd.Open(ctx, where, &urldedupd.Options{Create: true})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				handles[i] = s
			}
			news := make([][]int, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := handles[w%len(handles)]
					urls, dup, ids := make([]string, 0, batch), make([]bool, batch), make([]int, 0, batch)
					flush := func() {
						if err := s.Decide(ctx, urls, dup[:len(urls)]); err != nil {
							t.Error(err)
						}
						for i := range urls {
							if !dup[i] {
								news[w] = append(news[w], ids[i])
							}
						}
						urls, ids = urls[:0], ids[:0]
					}
					// Each worker walks every URL, from its own start.
					for k := range distinct {
						id := (k + w*distinct/workers) % distinct
						urls = append(urls, fmt.Sprintf("http://host%d.example/page/%d", id%97, id))
						ids = append(ids, id)
						if len(urls) == batch {
							flush()
						}
					}
					flush()
				}()
			}
			wg.Wait()
			count := make([]int, distinct)
			for _, ns := range news {
				for _, id := range ns {
					count[id]++
				}
			}
			lost, twice := 0, 0
			for _, c := range count {
				switch {
				case c == 0:
					lost++
				case c > 1:
					twice++
				}
			}
			// The bitmap's CRC32 can make two of these URLs one signature:
			// the second is then answered a duplicate (lost) with a chance
			// of about 20,000²/2³³ ≈ 5% per run; allow that one.
			if lost > 1 || twice != 0 {
				t.Fatalf("%d distinct URLs by %d workers: %d lost (never new), %d answered new twice", distinct, workers, lost, twice)
			}
			st, err := handles[0].Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Distinct < distinct*0.99 || st.Distinct > distinct*1.01 {
				t.Fatalf("stats: %+v, want about %d distinct", st, distinct)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	if _, err := urldedupd.Open(ctx, dir, nil); !errors.Is(err, urldedupd.ErrNoState) {
		t.Fatalf("open of no state: %v, want ErrNoState", err)
	}
	s, err := urldedupd.Open(ctx, dir, &urldedupd.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Decide(ctx, []string{"http://a/"}, nil); err == nil {
		t.Fatal("Decide with no room for the answers: no error")
	}
	dup := []bool{true}
	if err := s.Decide(ctx, []string{"http://a/"}, dup); err != nil || dup[0] {
		t.Fatalf("first Decide: %v %v", err, dup)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := urldedupd.Open(ctx, dir, &urldedupd.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Check(ctx, []string{"http://a/", "http://b/"}, make([]bool, 2)); err != nil {
		t.Fatalf("check of a read-only state: %v", err)
	}
	dup = []bool{false, true}
	if err := ro.Check(ctx, []string{"http://A:80/", "http://b/"}, dup); err != nil || !dup[0] || dup[1] {
		t.Fatalf("check after reopen: %v %v, want [true false]", err, dup)
	}
	if err := ro.Decide(ctx, []string{"http://b/"}, dup[:1]); !errors.Is(err, urldedupd.ErrReadOnly) {
		t.Fatalf("Decide on a read-only state: %v, want ErrReadOnly", err)
	}
}

// Deciding a batch allocates nothing once its scratch is warm.
func TestDecideAllocs(t *testing.T) {
	if racetest.Enabled {
		t.Skip("the race detector's sync.Pool drops pooled scratch on purpose")
	}
	ctx := context.Background()
	s, err := urldedupd.Open(ctx, filepath.Join(t.TempDir(), "state"), &urldedupd.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	urls := []string{"http://example.com/a", "HTTP://EXAMPLE.com/b/../c", "http://example.com/%7euser"}
	dup := make([]bool, len(urls))
	if n := testing.AllocsPerRun(1000, func() { s.Decide(ctx, urls, dup) }); n > 0 {
		t.Fatalf("Decide allocates %.1f times per batch", n)
	}
}

package state_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/redistest"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

func TestIsRemote(t *testing.T) {
	for _, tt := range []struct {
		where  string
		remote bool
	}{
		{"/var/lib/urldedupd", false},
		{"state", false},
		{"redis-state", false}, // a directory named like a scheme, without "://"
		{"redis://127.0.0.1:6379/0", true},
		{"rediss://h:6380/1", true},
		{"redis-cluster://a:7000,b:7001", true},
		{"rediss-cluster://a:7000", true},
	} {
		if got := state.IsRemote(tt.where); got != tt.remote {
			t.Errorf("IsRemote(%q) = %v, want %v", tt.where, got, tt.remote)
		}
	}
}

// decideTwice signs urls with the state's signer and decides them twice,
// returning both answers as text.
func decideTwice(t *testing.T, st *state.State, urls []string) string {
	t.Helper()
	signer := st.Signer()
	sigs := make([]signature.Signature, len(urls))
	for i, u := range urls {
		sigs[i], _ = signer.Sign([]byte(u))
	}
	seen := make([]bool, len(sigs))
	var out string
	for range 2 {
		if err := st.Decide(context.Background(), sigs, seen, false); err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprint(seen)
	}
	return out
}

// keyedMeta is the metadata of a new keyed state of 4 MiB shards.
func keyedMeta(t *testing.T) *format.Meta {
	k, err := keyed.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	m := format.NewMeta(format.KeyedSpec(signature.Safe), time.Now())
	m.Sizes.ShardBytes, m.Key = 4<<20, &k
	return &m
}

// Every kind of state, of every layout, answers the same, and says in
// InFlight whether it answers at once (0: a directory) or in batches
// (Redis, with or without a local cache).
func TestOpenEveryKind(t *testing.T) {
	addr := redistest.Server(t)
	urls := []string{"http://a.example/", "http://b.example/", "HTTP://A.EXAMPLE:80/", "http://c.example/"}
	const want = "[false false true false][true true true true]"
	for _, layout := range []format.Layout{format.Bitmap, format.Keyed} {
		for _, tt := range []struct {
			name     string
			where    string
			remote   state.RemoteOptions
			inFlight int
		}{
			{"dir", filepath.Join(t.TempDir(), "s"), state.RemoteOptions{}, 0},
			{"redis", addr, state.RemoteOptions{Prefix: "plain-" + layout.Name()}, state.DefaultInFlight},
			{"redis+cache", addr, state.RemoteOptions{Prefix: "cached-" + layout.Name(), InFlight: 2, Cache: filepath.Join(t.TempDir(), "cache")}, 2},
		} {
			t.Run(layout.Name()+"/"+tt.name, func(t *testing.T) {
				opts := &state.Options{Create: true, Remote: tt.remote}
				if layout == format.Keyed {
					opts.New = keyedMeta(t)
				}
				st, err := state.Open(context.Background(), tt.where, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				if st.Meta().Spec.Layout != layout || st.Meta().Key != nil {
					t.Fatalf("Meta = %+v: want layout %s and no key", st.Meta(), layout)
				}
				if st.InFlight() != tt.inFlight {
					t.Errorf("InFlight = %d, want %d", st.InFlight(), tt.inFlight)
				}
				if got := decideTwice(t, st, urls); got != want {
					t.Errorf("answers %s, want %s", got, want)
				}
				rep, err := st.Report(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				stored := rep.BitsSet
				if layout == format.Keyed {
					stored = rep.SlotsUsed
				}
				if stored == nil || *stored != 3 || rep.Layout != layout.Name() || len(rep.Shards) != 256 {
					t.Errorf("Report = %+v; want 3 stored", rep)
				}
				if (st.Dir() != nil) != (tt.remote.Cache == "" && !state.IsRemote(tt.where)) || (st.Redis() != nil) != state.IsRemote(tt.where) {
					t.Errorf("Dir %v, Redis %v for %s", st.Dir() != nil, st.Redis() != nil, tt.where)
				}
				if err := st.Sync(); err != nil {
					t.Errorf("Sync: %v", err)
				}
			})
		}
	}
}

// A state of another format than the one required is the one mismatch
// error, from a directory and from Redis alike; without Create there is
// no state.
func TestOpenRefuses(t *testing.T) {
	none := format.Spec{Algorithm: signature.IEEE, Mode: signature.None}
	for _, where := range []string{filepath.Join(t.TempDir(), "s"), redistest.Server(t)} {
		if _, err := state.Open(context.Background(), where, nil); !errors.Is(err, format.ErrNoState) {
			t.Errorf("%s: Open without Create = %v, want ErrNoState", where, err)
		}
		st, err := state.Open(context.Background(), where, &state.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		if _, err := state.Open(context.Background(), where, &state.Options{Spec: &none}); !errors.Is(err, format.ErrMismatch) {
			t.Errorf("%s: Open(normalize none) = %v, want ErrMismatch", where, err)
		}
	}
}

package shardfile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// unfinished makes dir look like a creation killed after n shards (the
// last one cut short) and, if key, its key file: the creation marker, the
// files, no metadata.
func unfinished(t *testing.T, n int, key bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, shardfile.CreatingName), []byte("urldedupd-state 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		size := 2 << 20
		if i == n-1 {
			size = 4096
		}
		if err := os.WriteFile(filepath.Join(dir, format.ShardName(i)), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if key {
		if err := os.WriteFile(format.KeyPath(dir), []byte("urldedupd-key 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A creation that was killed (issue 19, item 8: shards without metadata
// made every later command, init included, exit 3) is refused as no state
// by an opener that does not create, and removed and made again by one
// that does; files that are not the creation's are left alone.
func TestUnfinishedCreationIsRedone(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shards int
		key    bool
		keyed  bool
	}{
		{"marker only", 0, false, false},
		{"some shards", 37, false, false},
		{"every shard", 256, false, false},
		{"keyed, key file and shards", 12, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := unfinished(t, tt.shards, tt.key)
			other := filepath.Join(dir, "notes.txt") // not the creation's
			if err := os.WriteFile(other, []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, o := range []*shardfile.Options{nil, {ReadOnly: true, Create: true}} {
				if _, err := shardfile.Open(dir, o); !errors.Is(err, format.ErrNoState) || !strings.Contains(err.Error(), "interrupted") {
					t.Fatalf("Open(%+v) of an unfinished creation: %v, want ErrNoState saying it was interrupted", o, err)
				}
			}
			opts := &shardfile.Options{Create: true}
			if tt.keyed {
				spec := format.KeyedSpec(signature.Safe)
				m := format.NewMeta(spec, time.Now())
				m.Key = &signature.Key{1, 2, 3}
				opts.Spec, opts.New = &spec, &m
			}
			d, err := shardfile.Open(dir, opts)
			if err != nil {
				t.Fatalf("create over an unfinished creation: %v", err)
			}
			if !d.Created() {
				t.Error("Created() = false")
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(dir, shardfile.CreatingName)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("marker left after creation: %v", err)
			}
			if b, err := os.ReadFile(other); err != nil || string(b) != "mine" {
				t.Fatalf("a file not the creation's: %q %v", b, err)
			}
			d, err = shardfile.Open(dir, nil)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			if k := d.Key(); tt.keyed && (k == nil || *k != signature.Key{1, 2, 3}) {
				t.Fatalf("key of the new state: %v", k)
			}
			// bytes.Equal, not a loop over the bytes: the same check, which
			// the race detector does not instrument byte by byte.
			var zeros []byte
			for i := range 256 {
				if len(zeros) != len(d.Shard(i)) {
					zeros = make([]byte, len(d.Shard(i)))
				}
				if !bytes.Equal(d.Shard(i), zeros) {
					t.Fatalf("shard %02x of the new state is not zeros", i)
				}
			}
			d.Close()
		})
	}
}

// Under the marker, a shard that is not a regular file was not made by the
// creation: it is neither removed nor followed, and creation is refused.
func TestUnfinishedCreationKeepsForeignFiles(t *testing.T) {
	dir := unfinished(t, 3, false)
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, format.ShardName(7))); err != nil {
		t.Fatal(err)
	}
	_, err := shardfile.Open(dir, &shardfile.Options{Create: true})
	if !errors.Is(err, shardfile.ErrIncomplete) {
		t.Fatalf("Open: %v, want ErrIncomplete", err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep" {
		t.Fatalf("link target: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, format.ShardName(7))); err != nil {
		t.Fatalf("the link was removed: %v", err)
	}
}

// Shards without metadata and without the marker are not provably the
// work of a creation: still refused, nothing removed.
func TestShardsWithoutMarkerRefused(t *testing.T) {
	dir := unfinished(t, 5, false)
	os.Remove(filepath.Join(dir, shardfile.CreatingName))
	if _, err := shardfile.Open(dir, &shardfile.Options{Create: true}); !errors.Is(err, shardfile.ErrIncomplete) {
		t.Fatalf("Open: %v, want ErrIncomplete", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, format.ShardName(4))); err != nil {
		t.Fatalf("a shard was removed: %v", err)
	}
}

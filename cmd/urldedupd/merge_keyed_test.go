package main_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// initKeyedDir makes a keyed state at dir with extra init flags.
func initKeyedDir(t *testing.T, dir string, extra ...string) {
	t.Helper()
	initKeyed(t, []string{"--dir", dir}, extra...)
}

// sameKeyFile fails unless dir's key file is mode 0600 and holds the key of
// file want.
func sameKeyFile(t *testing.T, dir, want string) {
	t.Helper()
	p := filepath.Join(dir, "urldedupd.key")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	w, _ := os.ReadFile(want)
	if st.Mode().Perm() != 0o600 || !bytes.Equal(got, w) || len(w) == 0 {
		t.Fatalf("%s: mode %v, same key as %s: %v", p, st.Mode().Perm(), want, bytes.Equal(got, w))
	}
}

// refused runs args and fails unless they exit 3 (a format mismatch) with
// want in the message, leaving the state at dir (when not "") and the Redis
// keys of prefix on addr (when addr is not "") as they were.
func refused(t *testing.T, dir, addr, prefix, want string, args ...string) {
	t.Helper()
	var before, beforeRedis string
	if dir != "" {
		before = sums(t, dir)
	}
	if addr != "" {
		beforeRedis = redisDigest(t, addr, prefix)
	}
	_, stderr, code := run(t, nil, args...)
	if code != 3 || !strings.Contains(stderr, "state format differs") || !strings.Contains(stderr, want) {
		t.Fatalf("%v: exit %d %q, want 3 and %q", args, code, stderr, want)
	}
	if dir != "" && sums(t, dir) != before {
		t.Fatalf("%v: refused, yet %s changed", args, dir)
	}
	if addr != "" && redisDigest(t, addr, prefix) != beforeRedis {
		t.Fatalf("%v: refused, yet Redis %s changed", args, prefix)
	}
}

// redisDigest hashes the metadata and every shard key of prefix on addr.
func redisDigest(t *testing.T, addr, prefix string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	h := sha256.New()
	for _, k := range append([]string{"meta"}, hexShards()...) {
		b, err := c.Get(context.Background(), prefix+":"+k).Bytes()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d %x\n", k, len(b), sha256.Sum256(b))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func hexShards() []string {
	s := make([]string, 256)
	for i := range s {
		s[i] = fmt.Sprintf("%02x", i)
	}
	return s
}

// Two keyed states made with one shared key merge: the result answers dup
// for every URL of either and new for others, and has their key. States of
// another key, layout or size are refused and nothing changes.
func TestMergeKeyed(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	key := filepath.Join(tmp, "fleet.key")
	a, b, c := filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), filepath.Join(tmp, "c")
	initKeyedDir(t, a, "--key-file", key)
	initKeyedDir(t, b, "--key-file", key)
	// 20,500 URLs in a: every shard has some (an empty one is not copied).
	filterInto(t, a, urlLines("shared", 0, 500)+urlLines("a", 0, 20_000))
	filterInto(t, b, urlLines("shared", 0, 500)+urlLines("b", 0, 700))

	out, stderr, code := run(t, nil, "merge", "--into", c, a, b)
	// a is copied into the new c; b is re-inserted: its shared URLs are there.
	if code != 0 || !strings.Contains(out, a+": 256 shards copied, 0 URLs merged") ||
		!strings.Contains(out, b+": 0 shards copied, 700 URLs merged, 500 already present, 0 not stored") {
		t.Fatalf("merge into new: %d %q %q", code, out, stderr)
	}
	sameKeyFile(t, c, key)
	union := urlLines("shared", 0, 500) + urlLines("a", 0, 20_000) + urlLines("b", 0, 700)
	if n, d := marks(t, c, union); n != 0 || d != 21_200 {
		t.Fatalf("merged state: %d new, %d dup of the union", n, d)
	}
	if n, _ := marks(t, c, urlLines("never", 0, 1000)); n != 1000 {
		t.Fatalf("merged state claims %d unseen URLs", 1000-n)
	}
	// Into an existing state: only what it lacks is added.
	out, _, code = run(t, nil, "merge", "--into", a, b)
	if code != 0 || !strings.Contains(out, "700 URLs merged, 500 already present, 0 not stored") {
		t.Fatalf("merge into a: %d %q", code, out)
	}
	if n, d := marks(t, a, union); n != 0 || d != 21_200 {
		t.Fatalf("a after the merge: %d new, %d dup of the union", n, d)
	}

	otherKey, bitmap, bigger := filepath.Join(tmp, "otherkey"), filepath.Join(tmp, "bitmap"), filepath.Join(tmp, "bigger")
	initKeyedDir(t, otherKey)
	filterInto(t, otherKey, urlLines("other", 0, 100))
	initKeyedDir(t, bigger, "--key-file", key, "--size", "1GiB")
	filterInto(t, bitmap, urlLines("bitmap", 0, 100))
	refused(t, c, "", "", "different keys", "merge", "--into", c, otherKey)
	refused(t, c, "", "", "layout keyed", "merge", "--into", c, bitmap)
	refused(t, bitmap, "", "", "layout keyed", "merge", "--into", bitmap, c)
	refused(t, c, "", "", "shards of", "merge", "--into", c, bigger)
	refused(t, bigger, "", "", "shards of", "merge", "--into", bigger, c)
	// Sources that differ among themselves: refused before DST is made.
	fresh := filepath.Join(tmp, "fresh")
	refused(t, "", "", "", "different keys", "merge", "--into", fresh, a, otherKey)
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("a refused merge made %s: %v", fresh, err)
	}
}

// migrate on the keyed layout: a directory to Redis (a byte copy into an
// empty Redis, with the key in the metadata), more URLs from another
// directory of the same key into the now non-empty Redis (re-insert), back
// to a new directory (a copy, with the key file) and into an existing one
// (re-insert): every side answers dup for every URL stored and new for
// others. Other keys, layouts and sizes are refused and change nothing.
func TestMigrateKeyed(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	addr, _, _ := redisServer(t, tmp)
	backend := "redis://" + addr + "/0"
	key := filepath.Join(tmp, "fleet.key")
	a, b, back := filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), filepath.Join(tmp, "back")
	initKeyedDir(t, a, "--key-file", key)
	initKeyedDir(t, b, "--key-file", key)
	filterInto(t, a, urlLines("a", 0, 20_000))
	filterInto(t, b, urlLines("a", 0, 1000)+urlLines("b", 0, 5000))
	k := []string{"--redis-prefix", "k"}

	out, stderr, code := run(t, nil, append(k, "migrate", "--from", a, "--to", backend)...)
	if code != 0 || !strings.Contains(out, "256 shards sent, 0 empty, 0 already done; 256 shards copied, 0 URLs merged") {
		t.Fatalf("upload: %d %q %q", code, out, stderr)
	}
	out, _, code = run(t, nil, append(k, "migrate", "--from", a, "--to", backend)...)
	if code != 0 || !strings.Contains(out, "0 shards sent, 0 empty, 256 already done") {
		t.Fatalf("upload again: %d %q", code, out)
	}
	if n, d := marksArgs(t, urlLines("a", 0, 20_000), append([]string{"--backend", backend}, k...)...); n != 0 || d != 20_000 {
		t.Fatalf("Redis after upload: %d new, %d dup", n, d)
	}
	filterInto(t, "", urlLines("redis-only", 0, 3000), append([]string{"--backend", backend}, append(k, "filter")...)...)
	out, stderr, code = run(t, nil, append(k, "migrate", "--from", b, "--to", backend)...)
	if code != 0 || !strings.Contains(out, "0 shards copied, 5000 URLs merged, 1000 already present, 0 not stored") {
		t.Fatalf("upload into non-empty: %d %q %q", code, out, stderr)
	}
	all := urlLines("a", 0, 20_000) + urlLines("b", 0, 5000) + urlLines("redis-only", 0, 3000)
	if n, d := marksArgs(t, all, append([]string{"--backend", backend}, k...)...); n != 0 || d != 28_000 {
		t.Fatalf("Redis after both uploads: %d new, %d dup", n, d)
	}

	out, stderr, code = run(t, nil, append(k, "migrate", "--from", backend, "--to", back)...)
	if code != 0 || !strings.Contains(out, "256 shards copied, 0 URLs merged") {
		t.Fatalf("download: %d %q %q", code, out, stderr)
	}
	sameKeyFile(t, back, key)
	if n, d := marks(t, back, all); n != 0 || d != 28_000 {
		t.Fatalf("local after download: %d new, %d dup", n, d)
	}
	if n, _ := marks(t, back, urlLines("never", 0, 2000)); n != 2000 {
		t.Fatalf("downloaded state claims %d unseen URLs", 2000-n)
	}
	// Into an existing directory (b): re-inserted, only what it lacks.
	out, stderr, code = run(t, nil, append(k, "migrate", "--from", backend, "--to", b)...)
	if code != 0 || !strings.Contains(out, "0 shards copied, 22000 URLs merged, 6000 already present, 0 not stored") {
		t.Fatalf("download into b: %d %q %q", code, out, stderr)
	}
	if n, d := marks(t, b, all); n != 0 || d != 28_000 {
		t.Fatalf("b after download: %d new, %d dup", n, d)
	}

	// Refused, changing nothing on either side.
	otherKey, bitmap, bigger := filepath.Join(tmp, "otherkey"), filepath.Join(tmp, "bitmap"), filepath.Join(tmp, "bigger")
	initKeyedDir(t, otherKey)
	filterInto(t, otherKey, urlLines("other", 0, 100))
	initKeyedDir(t, bigger, "--key-file", key, "--size", "1GiB")
	filterInto(t, bigger, urlLines("bigger", 0, 100))
	filterInto(t, bitmap, urlLines("bitmap", 0, 100))
	refused(t, "", addr, "k", "different keys", append(k, "migrate", "--from", otherKey, "--to", backend)...)
	refused(t, otherKey, "", "", "different keys", append(k, "migrate", "--from", backend, "--to", otherKey)...)
	refused(t, "", addr, "k", "layout keyed", append(k, "migrate", "--from", bitmap, "--to", backend)...)
	refused(t, bitmap, "", "", "layout keyed", append(k, "migrate", "--from", backend, "--to", bitmap)...)
	refused(t, "", addr, "k", "shards of", append(k, "migrate", "--from", bigger, "--to", backend)...)
	refused(t, bigger, "", "", "shards of", append(k, "migrate", "--from", backend, "--to", bigger)...)
}

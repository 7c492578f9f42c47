package main_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/linefilter"
)

func initKeyed(t *testing.T, stateArgs []string, extra ...string) {
	t.Helper()
	args := append(append(append([]string{}, stateArgs...), "init", "--layout", "keyed"), extra...)
	if out, stderr, code := run(t, nil, args...); code != 0 {
		t.Fatalf("init %v: %d %q %q", extra, code, out, stderr)
	}
}

// Four filter processes at once on overlapping inputs, on a keyed state
// in a directory, in Redis and in a Redis Cluster: every distinct URL is
// printed exactly once.
func TestKeyedExactlyOnce(t *testing.T) {
	t.Parallel()
	t.Run("dir", func(t *testing.T) {
		state := []string{"--dir", filepath.Join(t.TempDir(), "state")}
		initKeyed(t, state)
		n := exactlyOnce(t, byLine, 500_000, 150_000, state...)
		t.Logf("4 processes: %d distinct URLs, each printed once", n)
	})
	t.Run("redis", func(t *testing.T) {
		addr, _, _ := redisServer(t, t.TempDir())
		state := []string{"--backend", "redis://" + addr + "/0"}
		initKeyed(t, state)
		n := exactlyOnce(t, byLine, 100_000, 30_000, state...)
		out, _, code := run(t, nil, append(state, "stats", "--json")...)
		if code != 0 || !strings.Contains(out, fmt.Sprintf(`"slots_used": %d,`, n)) {
			t.Fatalf("stats: %d %.400s", code, out)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		masters, _ := redisCluster(t)
		state := []string{"--backend", "redis-cluster://" + strings.Join(masters, ",")}
		initKeyed(t, state)
		n := exactlyOnce(t, byLine, 60_000, 20_000, state...)
		t.Logf("cluster: %d distinct URLs, each printed once", n)
	})
}

// kill -9 in the middle of a run on a keyed state: what was printed is a
// duplicate afterwards (filterKilled checks it), running everything
// written again prints none of it a second time, and after that run every
// URL is held. The state is written before the output, so a kill can cost
// a line of output, never a second one: the URLs of the batch in flight
// (with --backend, of the --in-flight batches) are held but may never have
// been printed. Each batch's output is flushed before the next is decided,
// so that is at most linefilter.BatchSize URLs on a directory, and
// --in-flight (4) times that on Redis (issue 19, item 11: the 256 KiB
// output buffer cost thousands). Directory and Redis.
func TestKeyedSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	addr, _, _ := redisServer(t, t.TempDir())
	for _, state := range [][]string{{"--dir", filepath.Join(t.TempDir(), "state")}, {"--backend", "redis://" + addr + "/0", "--in-flight", "4"}} {
		bound := linefilter.BatchSize
		if state[0] == "--backend" {
			bound *= 4
		}
		initKeyed(t, state)
		printed, written := filterKilled(t, state...)
		var all strings.Builder
		for i := range written {
			fmt.Fprintf(&all, "http://kill.example.com/%d\n", i)
		}
		out, _, code := run(t, strings.NewReader(all.String()), append(state, "filter")...)
		if code != 0 {
			t.Fatalf("%v: re-run: exit %d", state, code)
		}
		again := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if l != "" {
				again[l] = true
			}
		}
		for _, u := range printed {
			if again[u] {
				t.Fatalf("%v: %s printed before the kill and again after", state, u)
			}
		}
		marks, _, code := run(t, strings.NewReader(all.String()), append(state, "filter", "--dry-run", "--mark")...)
		if code != 0 || strings.Count(marks, "dup\t") != written {
			t.Fatalf("%v: after the re-run %d of %d written are held", state, strings.Count(marks, "dup\t"), written)
		}
		owed := written - len(printed) - len(again)
		t.Logf("%v: killed after %d written, %d printed; the re-run printed %d; %d held but never printed (the batches in flight)",
			state, written, len(printed), len(again), owed)
		if owed > bound {
			t.Errorf("%v: %d URLs held but never printed; a kill may cost at most %d", state, owed, bound)
		}
	}
}

// fileStamps returns each file of dir with its size, modification time and,
// for the small ones (metadata, key), a hash of its bytes.
func fileStamps(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprintf("%d %v %v", fi.Size(), fi.ModTime(), fi.Mode())
		if fi.Size() < 4096 {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			sum := sha256.Sum256(b)
			s += " " + hex.EncodeToString(sum[:8])
		}
		out[e.Name()] = s
	}
	return out
}

// A keyed state whose key file is missing, corrupt, another state's, or
// readable by others is refused by every command, with the file named,
// and nothing in the state changes.
func TestKeyedKeyFileRefused(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	other := filepath.Join(tmp, "other")
	initKeyed(t, []string{"--dir", other})
	otherKey, _ := os.ReadFile(filepath.Join(other, format.KeyName))
	for _, tc := range []struct {
		name  string
		spoil func(path string)
		say   string
	}{
		{"missing", func(p string) { os.Remove(p) }, "key file is missing"},
		{"truncated", func(p string) { b, _ := os.ReadFile(p); os.WriteFile(p, b[:20], 0o600) }, "bad key file"},
		{"garbage", func(p string) { os.WriteFile(p, bytes.Repeat([]byte{0xff}, 49), 0o600) }, "bad key file"},
		{"another state's", func(p string) { os.WriteFile(p, otherKey, 0o600) }, "state was made with key id"},
		{"mode 0644", func(p string) { os.Chmod(p, 0o644) }, "chmod 600"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			initKeyed(t, []string{"--dir", dir})
			if out, _, code := run(t, strings.NewReader("http://a.example/\n"), "--dir", dir, "filter"); code != 0 || out == "" {
				t.Fatalf("filter before: %d", code)
			}
			key := filepath.Join(dir, format.KeyName)
			tc.spoil(key)
			before := fileStamps(t, dir)
			for _, args := range [][]string{{"filter"}, {"check", "http://a.example/"}, {"stats"}} {
				_, stderr, code := run(t, strings.NewReader("http://b.example/\n"), append([]string{"--dir", dir}, args...)...)
				if code != 3 || !strings.Contains(stderr, key) || !strings.Contains(stderr, tc.say) {
					t.Errorf("%s: exit %d, %q; want 3 (a bad state), naming %s and saying %q", args[0], code, stderr, key, tc.say)
				}
			}
			after := fileStamps(t, dir)
			for name, s := range before {
				if after[name] != s {
					t.Errorf("%s changed: %s -> %s", name, s, after[name])
				}
			}
		})
	}
}

// init --key-file: a file that does not exist is written (0600) with the
// state's key, a second state made with it has the same key id, and a
// state of another key is refused; the key itself is never printed.
func TestKeyedSharedKeyFile(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	keyFile := filepath.Join(tmp, "fleet.key")
	a, b, c := filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), filepath.Join(tmp, "c")
	var printed strings.Builder
	runAll := func(stdin string, args ...string) (string, int) {
		out, stderr, code := run(t, strings.NewReader(stdin), args...)
		printed.WriteString(out + stderr)
		return out, code
	}
	if _, code := runAll("", "--dir", a, "init", "--layout", "keyed", "--key-file", keyFile); code != 0 {
		t.Fatal("init a")
	}
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	kf, _ := os.ReadFile(keyFile)
	ka, _ := os.ReadFile(filepath.Join(a, format.KeyName))
	if !bytes.Equal(kf, ka) {
		t.Fatal("the key file written is not the state's key")
	}
	if _, code := runAll("", "--dir", b, "init", "--layout", "keyed", "--key-file", keyFile); code != 0 {
		t.Fatal("init b")
	}
	metaID := func(dir string) string {
		m, _ := os.ReadFile(filepath.Join(dir, "urldedupd.meta"))
		for _, l := range strings.Split(string(m), "\n") {
			if id, ok := strings.CutPrefix(l, "key-id "); ok {
				return id
			}
		}
		return ""
	}
	if metaID(a) == "" || metaID(a) != metaID(b) {
		t.Fatalf("key ids %q and %q", metaID(a), metaID(b))
	}
	if _, code := runAll("", "--dir", c, "init", "--layout", "keyed"); code != 0 {
		t.Fatal("init c")
	}
	if out, code := runAll("", "--dir", c, "init", "--layout", "keyed", "--key-file", keyFile); code == 0 {
		t.Fatalf("init of a state of another key with --key-file: %q", out)
	}
	runAll("http://a.example/\n", "--dir", a, "filter")
	runAll("", "--dir", a, "stats")
	runAll("", "--dir", a, "stats", "--json")
	runAll("", "--dir", a, "check", "http://a.example/")
	k, _ := format.ParseKey(kf)
	for _, secret := range []string{hex.EncodeToString(k[:]), strings.ToUpper(hex.EncodeToString(k[:])), string(k[:])} {
		if strings.Contains(printed.String(), secret) {
			t.Fatalf("the key was printed:\n%s", printed.String())
		}
	}
}

// A state of today's format (the bitmap, its metadata as version 1 writes
// it) built by hand opens and answers as before, and nothing rewrites its
// metadata.
func TestOldFormatStateUnchanged(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	os.MkdirAll(dir, 0o755)
	meta, err := os.ReadFile("../../internal/format/testdata/meta-v1.golden")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "urldedupd.meta"), meta, 0o644)
	seen := []string{"http://old.example/a", "http://old.example/b", "https://old.example/c?x=1"}
	shards := make([][]byte, 256)
	for i := range shards {
		shards[i] = make([]byte, format.ShardBytes)
	}
	for _, u := range seen {
		sig := crc32.ChecksumIEEE([]byte(u)) // already in normal form
		bit := sig & 0xffffff
		shards[sig>>24][bit/8] |= 1 << (bit % 8)
	}
	for i, b := range shards {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02x", i)), b, 0o644)
	}
	out, stderr, code := run(t, nil, append([]string{"--dir", dir, "check"}, append(seen, "http://old.example/new")...)...)
	want := "dup\thttp://old.example/a\ndup\thttp://old.example/b\ndup\thttps://old.example/c?x=1\nnew\thttp://old.example/new\n"
	if code != 0 || out != want {
		t.Fatalf("check: %d %q %q, want %q", code, out, stderr, want)
	}
	if out, _, code := run(t, strings.NewReader("http://old.example/a\nhttp://old.example/d\n"), "--dir", dir, "filter"); code != 0 || out != "http://old.example/d\n" {
		t.Fatalf("filter: %d %q", code, out)
	}
	out, _, code = run(t, nil, "--dir", dir, "stats", "--json")
	var rep struct {
		Layout  string `json:"layout"`
		BitsSet uint64 `json:"bits_set"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Layout != "bitmap" || rep.BitsSet != 4 {
		t.Fatalf("stats: %d %v %+v", code, err, rep)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "urldedupd.meta")); !bytes.Equal(after, meta) {
		t.Fatalf("metadata rewritten:\n%s", after)
	}
}

// init refuses what it cannot make, with usage mistakes exiting 2.
func TestInitRefusals(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	for _, tc := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"--layout", "keyed", "--signature", "crc32"}, 2, "keyed layout signs with siphash-1-3"},
		{[]string{"--key-file", "/tmp/x"}, 2, "the bitmap layout has no key"},
		{[]string{"--layout", "keyed", "--size", "3MiB"}, 2, "power of two"},
		{[]string{"--layout", "keyed", "--size", "lots"}, 2, "not a size"},
		{[]string{"--layout", "keyed", "--capacity", "1000000000000", "--false-dup", "1e-12"}, 2, "cannot be met"},
		{[]string{"--capacity", "100000000", "--false-dup", "1e-6"}, 2, "init --layout keyed"},
		{[]string{"--layout", "bloomish"}, 2, "layout"},
		{[]string{"--false-dup", "0.1"}, 2, "give --capacity too"},
	} {
		_, stderr, code := run(t, nil, append([]string{"--dir", dir, "init"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.say) {
			t.Errorf("init %v: exit %d %q; want %d saying %q", tc.args, code, stderr, tc.code, tc.say)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("init %v made %s", tc.args, dir)
		}
	}
}

// Every command on a keyed state: replay (twice: the second finds nothing
// new), filter and check agree with it, stats --json counts what was
// stored, serve's API answers from the same state and reports it in
// /v1/stats, and a snapshot holds everything, with the same key.
func TestKeyedEveryCommand(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "state")
	initKeyed(t, []string{"--dir", dir})
	want := expectedURLs(t)
	out, stderr, code := run(t, nil, "--dir", dir, "replay", capturePath)
	if code != 0 || strings.Count(out, "\n") != len(want) || !strings.Contains(stderr, "new 25  dup 0") {
		t.Fatalf("replay: %d %q %q", code, out, stderr)
	}
	if out, stderr, code := run(t, nil, "--dir", dir, "replay", capturePath); code != 0 || out != "" || !strings.Contains(stderr, "new 0  dup 25") {
		t.Fatalf("second replay: %d %q %q", code, out, stderr)
	}
	if out, _, code := run(t, strings.NewReader(strings.Join(want, "\n")+"\nhttp://fresh.example/\n"), "--dir", dir, "filter"); code != 0 || out != "http://fresh.example/\n" {
		t.Fatalf("filter after replay: %d %q", code, out)
	}
	if out, _, code := run(t, nil, "--dir", dir, "check", want[0], "http://never.example/"); code != 0 || out != "dup\t"+want[0]+"\nnew\thttp://never.example/\n" {
		t.Fatalf("check: %d %q", code, out)
	}
	var rep struct {
		Layout      string   `json:"layout"`
		SlotsUsed   uint64   `json:"slots_used"`
		FalseDup    float64  `json:"false_duplicate_chance"`
		Capacity    uint64   `json:"capacity"`
		CapUsed     *float64 `json:"capacity_used"`
		NotStoredCh *float64 `json:"not_stored_chance"`
	}
	stats := func(args ...string) {
		t.Helper()
		out, _, code := run(t, nil, append([]string{"--dir", dir}, args...)...)
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
			t.Fatalf("stats --json: %d %v %q", code, err, out)
		}
	}
	stats("stats", "--json")
	distinct := uint64(len(want) + 1)
	if rep.Layout != "keyed" || rep.SlotsUsed != distinct || !(rep.FalseDup > 0 && rep.FalseDup < 1e-12) ||
		rep.Capacity < 60_000_000 || rep.CapUsed == nil || rep.NotStoredCh == nil || *rep.NotStoredCh != 0 {
		t.Fatalf("stats: %+v, want %d slots used", rep, distinct)
	}

	_, sock := serve(t, dir)
	c := unixClient(sock)
	code, body := post(t, c, "/v1/check", want[0]+"\nhttp://api.example/\nhttp://api.example/\n")
	if code != 200 || body != "dup\nnew\ndup\n" {
		t.Fatalf("API: %d %q", code, body)
	}
	resp, err := c.Get("http://urldedupd/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if err != nil || rep.Layout != "keyed" || rep.SlotsUsed != distinct+1 {
		t.Fatalf("/v1/stats: %v %+v, want %d slots used", err, rep, distinct+1)
	}

	snap := filepath.Join(tmp, "snap")
	if _, stderr, code := run(t, nil, "--dir", dir, "snapshot", snap); code != 0 {
		t.Fatalf("snapshot: %d %s", code, stderr)
	}
	fi, err := os.Stat(filepath.Join(snap, format.KeyName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot key file: %v %v", fi, err)
	}
	k1, _ := os.ReadFile(filepath.Join(dir, format.KeyName))
	k2, _ := os.ReadFile(filepath.Join(snap, format.KeyName))
	if !bytes.Equal(k1, k2) {
		t.Fatal("the snapshot has another key")
	}
	in := strings.Join(append(want, "http://fresh.example/", "http://api.example/", "http://after.example/"), "\n") + "\n"
	if out, _, code := run(t, strings.NewReader(in), "--dir", snap, "filter", "--dry-run"); code != 0 || out != "http://after.example/\n" {
		t.Fatalf("snapshot answers: %d %q", code, out)
	}
}

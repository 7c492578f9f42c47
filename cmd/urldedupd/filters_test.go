package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// filterLayouts are the Bloom family's layouts, each sized so that the
// tests below expect no false duplicate at all: bloom and mdbf at about
// 1e-14 after a million URLs, dsbf with fmax 1e-9 (a million queries: a
// 0.1% chance of one), which splits its 64 KiB leaves many times.
var filterLayouts = []struct {
	name string
	init []string
}{
	{"bloom", []string{"--layout", "bloom", "--size", "64MiB", "--k", "10"}},
	{"mdbf", []string{"--layout", "mdbf", "--size", "64MiB", "--groups", "4", "--k", "4"}},
	{"dsbf", []string{"--layout", "dsbf", "--size", "64MiB", "--children", "3", "--fmax", "1e-9"}},
}

func initFilter(t *testing.T, stateArgs []string, init []string) {
	t.Helper()
	if out, stderr, code := run(t, nil, append(append(append([]string{}, stateArgs...), "init"), init...)...); code != 0 {
		t.Fatalf("init %v: %d %q %q", init, code, out, stderr)
	}
}

type filterStats struct {
	Layout      string   `json:"layout"`
	Distinct    *float64 `json:"estimated_distinct"`
	FalseDup    float64  `json:"false_duplicate_chance"`
	Leaves      int      `json:"leaves"`
	Height      int      `json:"height"`
	LiveLeaves  int      `json:"live_leaves"`
	OverBound   *int     `json:"over_bound_leaves"`
	LeafURLsMin uint64   `json:"leaf_urls_min"`
	LeafURLsMax uint64   `json:"leaf_urls_max"`
	Filter      *struct {
		K int `json:"K"`
	} `json:"filter"`
}

func statsOf(t *testing.T, stateArgs ...string) filterStats {
	t.Helper()
	out, stderr, code := run(t, nil, append(append([]string{}, stateArgs...), "stats", "--json")...)
	var s filterStats
	if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil {
		t.Fatalf("stats --json: %d %v %q %q", code, err, out, stderr)
	}
	return s
}

// Four filter processes at once on overlapping inputs, on each layout of
// the Bloom family: every distinct URL is printed exactly once (the batch
// lock), and the DSBF tree splits while they run.
func TestFilterLayoutsExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, l := range filterLayouts {
		t.Run(l.name, func(t *testing.T) {
			state := []string{"--dir", filepath.Join(t.TempDir(), "state")}
			initFilter(t, state, l.init)
			n := exactlyOnce(t, byLine, 300_000, 100_000, state...)
			s := statsOf(t, state...)
			t.Logf("%s: 4 processes, %d distinct URLs, each printed once; stats: distinct %.0f, false-dup chance %.3g, height %d, %d leaves",
				l.name, n, *s.Distinct, s.FalseDup, s.Height, s.Leaves)
			if l.name == "dsbf" {
				if float64(n) != *s.Distinct || s.Height < 2 || *s.OverBound != 0 || s.FalseDup > 1e-9 {
					t.Fatalf("dsbf after %d URLs: %+v", n, s)
				}
			}
		})
	}
}

// kill -9 in the middle of a run on each layout loses nothing: what was
// printed is a duplicate afterwards (filterKilled checks it), and the
// state opens and answers after the kill (the lock died with the
// process).
func TestFilterLayoutsSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	for _, l := range filterLayouts {
		t.Run(l.name, func(t *testing.T) {
			state := []string{"--dir", filepath.Join(t.TempDir(), "state")}
			initFilter(t, state, l.init)
			printed, written := filterKilled(t, state...)
			out, _, code := run(t, strings.NewReader("http://after.kill.example/\n"), append(state, "filter")...)
			if code != 0 || out != "http://after.kill.example/\n" {
				t.Fatalf("filter after the kill: %d %q", code, out)
			}
			t.Logf("%s: killed after %d written, %d printed, all duplicates after", l.name, written, len(printed))
		})
	}
}

// Every command works on each layout: replay twice, filter, check, stats,
// the API and /v1/stats, snapshot, and merge (OR for bloom and mdbf;
// refused for dsbf, whose leaves cannot be OR-ed). Redis refuses them.
func TestFilterLayoutsEveryCommand(t *testing.T) {
	t.Parallel()
	want := expectedURLs(t)
	for _, l := range filterLayouts {
		t.Run(l.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "state")
			initFilter(t, []string{"--dir", dir}, l.init)
			out, stderr, code := run(t, nil, "--dir", dir, "replay", capturePath)
			if code != 0 || strings.Count(out, "\n") != len(want) {
				t.Fatalf("replay: %d %q %q", code, out, stderr)
			}
			if out, stderr, code := run(t, nil, "--dir", dir, "replay", capturePath); code != 0 || out != "" || !strings.Contains(stderr, fmt.Sprintf("new 0  dup %d", len(want))) {
				t.Fatalf("second replay: %d %q %q", code, out, stderr)
			}
			if out, _, code := run(t, strings.NewReader(strings.Join(want, "\n")+"\nhttp://fresh.example/\n"), "--dir", dir, "filter"); code != 0 || out != "http://fresh.example/\n" {
				t.Fatalf("filter after replay: %d %q", code, out)
			}
			if out, _, code := run(t, nil, "--dir", dir, "check", want[0], "http://never.example/"); code != 0 || out != "dup\t"+want[0]+"\nnew\thttp://never.example/\n" {
				t.Fatalf("check: %d %q", code, out)
			}
			s := statsOf(t, "--dir", dir)
			if s.Layout != l.name || s.Filter == nil || s.Filter.K < 1 || s.Distinct == nil || *s.Distinct < float64(len(want)) || *s.Distinct > float64(len(want)+3) {
				t.Fatalf("stats: %+v, want about %d distinct", s, len(want)+1)
			}
			if text, _, code := run(t, nil, "--dir", dir, "stats"); code != 0 || !strings.Contains(text, "filter      k ") {
				t.Fatalf("stats: %d %q", code, text)
			}

			_, sock := serve(t, dir)
			c := unixClient(sock)
			code, body := post(t, c, "/v1/check", want[0]+"\nhttp://api.example/\nhttp://api.example/\n")
			if code != 200 || body != "dup\nnew\ndup\n" {
				t.Fatalf("API: %d %q", code, body)
			}

			// snapshot: a state of its own that answers the same.
			snap := filepath.Join(tmp, "snap")
			if _, stderr, code := run(t, nil, "--dir", dir, "snapshot", snap); code != 0 {
				t.Fatalf("snapshot: %d %s", code, stderr)
			}
			if out, _, code := run(t, strings.NewReader(strings.Join(want, "\n")+"\nhttp://api.example/\nhttp://after-snap.example/\n"), "--dir", snap, "filter"); code != 0 || out != "http://after-snap.example/\n" {
				t.Fatalf("filter on the snapshot: %d %q", code, out)
			}

			// merge: a second state of the same key and parameters.
			other := filepath.Join(tmp, "other")
			key := filepath.Join(tmp, "shared.key")
			initFilter(t, []string{"--dir", other}, append(append([]string{}, l.init...), "--key-file", key))
			third := filepath.Join(tmp, "third")
			initFilter(t, []string{"--dir", third}, append(append([]string{}, l.init...), "--key-file", key))
			if out, _, code := run(t, strings.NewReader("http://merged.example/\n"), "--dir", other, "filter"); code != 0 || out == "" {
				t.Fatalf("filter into other: %d %q", code, out)
			}
			// bloom and mdbf are OR-ed; a DSBF is copied whole into an
			// empty state, and refused by one that holds anything.
			want := "bits added"
			if l.name == "dsbf" {
				want = "leaves copied"
			}
			out, stderr, code = run(t, nil, "merge", "--into", third, other)
			if code != 0 || !strings.Contains(out, want) {
				t.Fatalf("merge: %d %q %q", code, out, stderr)
			}
			if out, _, _ := run(t, nil, "--dir", third, "check", "http://merged.example/"); out != "dup\thttp://merged.example/\n" {
				t.Fatalf("after merge: %q", out)
			}
			out, stderr, code = run(t, nil, "merge", "--into", third, other)
			if l.name == "dsbf" && (code != 3 || !strings.Contains(stderr, "DSBF can only be copied into an empty state")) {
				t.Fatalf("merge into a DSBF that is not empty: %d %q %q", code, out, stderr)
			}
			if _, stderr, code := run(t, nil, "merge", "--into", dir, other); code == 0 || !strings.Contains(stderr, "keys") {
				t.Fatalf("merge of another key: %d %q", code, stderr)
			}
		})
	}
	addr, _, _ := redisServer(t, t.TempDir())
	for _, l := range filterLayouts[:2] { // bloom, mdbf
		_, stderr, code := run(t, nil, append([]string{"--backend", "redis://" + addr + "/0", "init"}, l.init...)...)
		if code == 0 || !strings.Contains(stderr, "state directory only") {
			t.Fatalf("%s in Redis: %d %q", l.name, code, stderr)
		}
	}
}

// A DSBF in Redis is the same tree as in a directory: with one key, the
// same URLs give the same answers, the same leaves byte for byte (each key
// equal to its shard file up to the key's length, zeros past it) and the
// same stats; and four processes at once print every URL exactly once, on
// Redis and on a 3-master Redis Cluster, while the tree splits.
func TestDSBFInRedis(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	key := filepath.Join(tmp, "fleet.key")
	dsbf := []string{"--layout", "dsbf", "--size", "4MiB", "--children", "3", "--fmax", "1e-3", "--key-file", key}
	dir := []string{"--dir", filepath.Join(tmp, "state")}
	addr, _, _ := redisServer(t, t.TempDir())
	rs := []string{"--backend", "redis://" + addr + "/0"}
	initFilter(t, dir, dsbf)
	initFilter(t, rs, dsbf)
	input := filepath.Join(tmp, "in.txt")
	writeURLs(t, input, 150_000, func(i int) int { return i * 7 % 120_000 })
	outDir, _, code := run(t, nil, append(dir, "filter", input)...)
	if code != 0 {
		t.Fatalf("filter dir: %d", code)
	}
	// One batch in flight: batches in flight at once may reach a leaf in
	// another order, which changes which URLs a split sends down (and so
	// which rare false duplicates happen), never whether one is printed
	// twice.
	outRedis, stderr, code := run(t, nil, append(rs, "--in-flight", "1", "filter", input)...)
	if code != 0 || outRedis != outDir {
		t.Fatalf("filter redis: %d %q: %d lines, the directory printed %d", code, stderr, strings.Count(outRedis, "\n"), strings.Count(outDir, "\n"))
	}
	// A dry run reads through split leaves: every line is held.
	for _, st := range [][]string{dir, rs} {
		marks, _, code := run(t, nil, append(st, "filter", "--dry-run", "--mark", input)...)
		if code != 0 || strings.Count(marks, "dup\t") != 150_000 {
			t.Fatalf("%v: dry run: %d, %d of 150,000 lines held", st, code, strings.Count(marks, "dup\t"))
		}
	}
	if out, _, code := run(t, nil, append(rs, "check", "http://never.example/")...); code != 0 || out != "new\thttp://never.example/\n" {
		t.Fatalf("check: %d %q", code, out)
	}
	sd, sr := statsOf(t, dir...), statsOf(t, rs...)
	t.Logf("120,000 distinct: %d printed; directory %+v; redis %+v", strings.Count(outDir, "\n"), sd, sr)
	if sd.Height < 2 || sd.Height != sr.Height || sd.Leaves != sr.Leaves || *sd.Distinct != *sr.Distinct || sd.FalseDup != sr.FalseDup {
		t.Fatalf("stats differ: directory %+v, redis %+v", sd, sr)
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for i := range 256 {
		file, err := os.ReadFile(filepath.Join(tmp, "state", fmt.Sprintf("%02x", i)))
		if err != nil {
			t.Fatal(err)
		}
		val, err := c.Get(context.Background(), fmt.Sprintf("urldedupd:%02x", i)).Bytes()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		if len(val) > len(file) || !bytes.Equal(val, file[:len(val)]) || strings.Trim(string(file[len(val):]), "\x00") != "" {
			t.Fatalf("leaf %02x: the Redis key (%d bytes) is not the shard file (%d bytes)", i, len(val), len(file))
		}
	}

	// Sized so the tree splits under 100,000 URLs, with no false
	// duplicate expected (fmax 1e-9).
	small := []string{"--layout", "dsbf", "--size", "16MiB", "--children", "3", "--fmax", "1e-9"}
	t.Run("exactly once", func(t *testing.T) {
		addr, _, _ := redisServer(t, t.TempDir())
		state := []string{"--backend", "redis://" + addr + "/0"}
		initFilter(t, state, small)
		n := exactlyOnce(t, byLine, 100_000, 30_000, state...)
		s := statsOf(t, state...)
		if float64(n) != *s.Distinct || s.Height < 2 {
			t.Fatalf("%d distinct printed; stats %+v", n, s)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		masters, _ := redisCluster(t)
		state := []string{"--backend", "redis-cluster://" + strings.Join(masters, ",")}
		initFilter(t, state, small)
		n := exactlyOnce(t, byLine, 60_000, 20_000, state...)
		s := statsOf(t, state...)
		if float64(n) != *s.Distinct || s.Height < 2 {
			t.Fatalf("%d distinct printed; stats %+v", n, s)
		}
		t.Logf("cluster: %d distinct URLs, each printed once; height %d, %d leaves", n, s.Height, s.Leaves)
	})
}

// `filter` leaves the shards to the kernel at exit (no msync) unless
// --sync asks it to wait until they are on disk (one msync a shard);
// either way the next process finds every URL.
func TestSyncFlag(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	for _, tt := range []struct {
		args []string
		url  string
		sync bool
	}{{nil, "http://a.example/", false}, {[]string{"--sync"}, "http://b.example/", true}} {
		trace := filepath.Join(t.TempDir(), "trace")
		cmd := exec.Command("strace", append(append([]string{"-f", "-e", "trace=msync", "-o", trace, binary}, tt.args...), "--dir", dir, "filter")...)
		cmd.Stdin = strings.NewReader(tt.url + "\n")
		if out, err := cmd.Output(); err != nil || string(out) != tt.url+"\n" {
			t.Fatalf("%v: %v %q", tt.args, err, out)
		}
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "msync("); (n >= 256) != tt.sync || (!tt.sync && n != 0) {
			t.Fatalf("%v: %d msync calls", tt.args, n)
		}
		if out, _, _ := run(t, nil, "--dir", dir, "check", tt.url); out != "dup\t"+tt.url+"\n" {
			t.Fatalf("after %v: %q", tt.args, out)
		}
	}
}

// A DSBF migrates whole into an empty state, in either direction (its
// leaves byte for byte: the same tree, the same answers), and is refused,
// changing nothing, by a destination that holds anything.
func TestDSBFMigrate(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "state")
	initFilter(t, []string{"--dir", dir}, []string{"--layout", "dsbf", "--size", "4MiB", "--fmax", "1e-3"})
	input := filepath.Join(tmp, "in.txt")
	writeURLs(t, input, 100_000, func(i int) int { return i })
	if _, _, code := run(t, nil, "--dir", dir, "filter", input); code != 0 {
		t.Fatalf("filter: %d", code)
	}
	addr, _, _ := redisServer(t, t.TempDir())
	rs := "redis://" + addr + "/0"
	out, stderr, code := run(t, nil, "migrate", "--from", dir, "--to", rs)
	if code != 0 || !strings.Contains(out, "leaves copied") {
		t.Fatalf("migrate to Redis: %d %q %q", code, out, stderr)
	}
	sd, sr := statsOf(t, "--dir", dir), statsOf(t, "--backend", rs)
	if sd.Height < 2 || sd.Height != sr.Height || sd.Leaves != sr.Leaves || *sd.Distinct != *sr.Distinct || sd.FalseDup != sr.FalseDup {
		t.Fatalf("after migrate: directory %+v, redis %+v", sd, sr)
	}
	if out, _, code := run(t, nil, "--backend", rs, "filter", input); code != 0 || out != "" {
		t.Fatalf("filter on Redis after migrate: %d, %d lines new", code, strings.Count(out, "\n"))
	}
	back := filepath.Join(tmp, "back")
	if out, stderr, code := run(t, nil, "migrate", "--from", rs, "--to", back); code != 0 || !strings.Contains(out, "leaves copied") {
		t.Fatalf("migrate back: %d %q %q", code, out, stderr)
	}
	if sb := statsOf(t, "--dir", back); *sb.Distinct != *sd.Distinct || sb.Leaves != sd.Leaves {
		t.Fatalf("back: %+v, want %+v", sb, sd)
	}
	// The same migrate again is done already (resumable, idempotent);
	// another source into the full DSBF is refused.
	if out, stderr, code := run(t, nil, "migrate", "--from", dir, "--to", rs); code != 0 || !strings.Contains(out, "256 already done") {
		t.Fatalf("migrate again: %d %q %q", code, out, stderr)
	}
	before := statsOf(t, "--backend", rs)
	if _, stderr, code := run(t, nil, "migrate", "--from", back, "--to", rs); code != 3 || !strings.Contains(stderr, "empty state") {
		t.Fatalf("migrate into a full DSBF: %d %q", code, stderr)
	}
	if after := statsOf(t, "--backend", rs); *after.Distinct != *before.Distinct {
		t.Fatalf("the refused migrate changed Redis: %v -> %v URLs", *before.Distinct, *after.Distinct)
	}
}

// The patent's experiment, for its answers (its timings are in
// scripts/bench-patent.sh): 75,012 URLs into a fresh state, then again;
// the first pass prints each distinct URL once, the second none. (60,000
// distinct URLs in 2^32 bits would collide with a chance of about a third
// if they were random; these are fixed, and none of their CRC32s collide.)
func TestPatentTwoPasses(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	input := filepath.Join(tmp, "patent.txt")
	writeURLs(t, input, 75_012, func(i int) int { return i * 7919 % 60_000 }) // repeats, as a crawl has
	data, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		distinct[l] = true
	}
	dir := filepath.Join(tmp, "state")
	if _, stderr, code := run(t, nil, "--dir", dir, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	first, _, code := run(t, nil, "--dir", dir, "filter", input)
	if code != 0 || strings.Count(first, "\n") != len(distinct) {
		t.Fatalf("pass 1: exit %d, %d lines, want %d distinct", code, strings.Count(first, "\n"), len(distinct))
	}
	if second, _, code := run(t, nil, "--dir", dir, "filter", input); code != 0 || second != "" {
		t.Fatalf("pass 2: exit %d, %d lines new", code, strings.Count(second, "\n"))
	}
}

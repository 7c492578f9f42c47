package main_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// A keyed state past its capacity says so: a URL whose buckets are full is
// printed by filter (it is new), every time, and filter warns how many were
// not stored; stats shows the full buckets and the not-stored chance. The
// full shard is made by writing it, as a state filled far past its
// capacity would be.
func TestKeyedNotStoredIsLoud(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state")
	if out, stderr, code := run(t, nil, "--dir", dir, "init", "--layout", "keyed"); code != 0 {
		t.Fatalf("init: %d %q %q", code, out, stderr)
	}
	shard := bytes.Repeat([]byte{0xee}, format.ShardBytes)
	if err := os.WriteFile(filepath.Join(dir, "3a"), shard, 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := format.ReadKeyFile(filepath.Join(dir, format.KeyName))
	if err != nil {
		t.Fatal(err)
	}
	signer := signature.NewKeyedSigner(key, signature.Safe)
	var in3a []string
	for i := 0; len(in3a) < 5 && i < 100_000; i++ {
		u := fmt.Sprintf("http://full.example/%d", i)
		if sig, _ := signer.Sign([]byte(u)); uint8(uint64(sig)>>56) == 0x3a {
			in3a = append(in3a, u)
		}
	}
	input := strings.Join(in3a, "\n") + "\n"
	for round := range 2 {
		out, stderr, code := run(t, strings.NewReader(input), "--dir", dir, "filter")
		if code != 0 || out != input || !strings.Contains(stderr, "5 URLs answered new but not stored") {
			t.Fatalf("round %d: filter: %d %q %q; want every URL printed and a warning", round, code, out, stderr)
		}
	}
	out, _, code := run(t, nil, "--dir", dir, "stats")
	if code != 0 || !strings.Contains(out, "1.5e-05 chance that the next new URL finds both its buckets full (0.391% of buckets full)") {
		t.Fatalf("stats: %d\n%s", code, out)
	}
}

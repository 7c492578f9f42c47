package bitcheck_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// A shard truncated under an open Dir (by another process, or an operator)
// makes every call that touches it return shardfile.ErrFault naming the
// shard, instead of the process dying of SIGBUS; other shards still work.
func TestTruncatedShardIsAnError(t *testing.T) {
	s, d := open(t)
	src, _ := open(t)
	if _, err := src.Check(0x3a000001, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(d.Path(), "3a"), 0); err != nil {
		t.Fatal(err)
	}
	in3a := []signature.Signature{0x01000000, 0x3a001234, 0x02000000}
	seen := make([]bool, len(in3a))
	calls := []struct {
		name string
		call func() error
	}{
		{"Decide", func() error { return s.Decide(context.Background(), in3a, seen, false) }},
		{"Decide dry run", func() error { return s.Decide(context.Background(), in3a, seen, true) }},
		{"Check", func() error { _, err := s.Check(0x3a00ffff, false); return err }},
		{"Check dry run", func() error { _, err := s.Check(0x3a00ffff, true); return err }},
		{"Fill", func() error { _, err := s.Fill(); return err }},
		{"Merge into", func() error { _, err := s.Merge(src); return err }},
		{"Merge from", func() error { _, err := src.Merge(s); return err }},
		{"OrShard", func() error { _, err := s.OrShard(0x3a, []byte{1}); return err }},
	}
	for _, c := range calls {
		err := c.call()
		if !errors.Is(err, shardfile.ErrFault) || !strings.Contains(err.Error(), filepath.Join(d.Path(), "3a")) {
			t.Errorf("%s: %v, want ErrFault naming %s/3a", c.name, err, d.Path())
		}
	}
	other := []signature.Signature{0x01000000, 0x3b000000, 0x01000000}
	if err := s.Decide(context.Background(), other, seen, false); err != nil || seen[0] || seen[1] || !seen[2] {
		t.Fatalf("other shards: %v %v", err, seen)
	}
}

// A panic that is not a fault on the mapping is not swallowed.
func TestDecideRepanicsOtherPanics(t *testing.T) {
	_, d := open(t)
	ro, err := shardfile.Open(d.Path(), &shardfile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "read-only") {
			t.Fatalf("recovered %v, want the read-only panic", r)
		}
	}()
	bitcheck.New(ro).Decide(context.Background(), []signature.Signature{1}, []bool{false}, false)
}

// The fault guard costs no allocation.
func TestDecideNoAllocs(t *testing.T) {
	s, _ := open(t)
	sigs := []signature.Signature{1, 2, 3, 0xffffffff}
	seen := make([]bool, len(sigs))
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { s.Decide(ctx, sigs, seen, false) }); n != 0 {
		t.Errorf("Decide: %v allocs", n)
	}
	if n := testing.AllocsPerRun(1000, func() { s.Check(12345, false) }); n != 0 {
		t.Errorf("Check: %v allocs", n)
	}
}

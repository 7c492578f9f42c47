package compare

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/urldedupd/urldedupd/internal/bloom"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Info describes a contender for the table.
type Info struct {
	Layout      string `json:"layout"`
	Params      string `json:"params"`
	Bytes       int64  `json:"bytes"`
	Persistent  bool   `json:"persistent"`
	ExactlyOnce string `json:"exactly_once"` // across processes: how, or why not
}

// contender is one layout under test, deciding URLs already in normal form.
type contender interface {
	info() Info
	decide(urls [][]byte, seen []bool, dryRun bool) error
	// theory is the layout's own chance that the next new URL is
	// reported a duplicate, after n distinct URLs.
	theory(n uint64) float64
	close() error
}

// Layouts are the contenders compare knows, in table order: urldedupd's
// layouts (in real temporary states; every registered layout.Contender),
// the patent's comparison Bloom filter exactly as the patent drew its
// positions (in memory), Zheng et al.'s bitmap hash table, the
// Age-Partitioned Bloom Filter (internal/apbf, the windowed layouts'
// anchor) and the exact set.
var Layouts = append(stateLayouts(), "bloom-patent", "hashtable", "apbf", "exact")

// stateLayouts are the names of the layouts compare measures in real
// states, in format order.
func stateLayouts() []string {
	var names []string
	for _, l := range layout.All() {
		if _, ok := l.(layout.Contender); ok {
			names = append(names, l.Name())
		}
	}
	return names
}

// newContender makes the contender name with memory bytes (where its rules
// allow), planned for n distinct URLs, with temporary state under dir.
func newContender(name string, memory int64, n uint64, dir string) (contender, error) {
	bitsOf := func() uint64 { return min(uint64(memory)*8, bloom.MaxBits) }
	if l, err := layout.ByName(name); err == nil && l.Name() == name {
		if lc, ok := l.(layout.Contender); ok {
			return newStateContender(lc, memory, n, dir)
		}
	}
	switch name {
	case "bloom-patent":
		m := bitsOf()
		k := int(math.Round(float64(m) / float64(max(n, 1)) * math.Ln2))
		k = max(1, min(bloom.MaxK, k))
		f, err := bloom.New(make([]byte, (m+63)/64*8), m, k)
		if err != nil {
			return nil, err
		}
		return &bloomC{f: f}, nil
	case "hashtable":
		m := bitsOf()
		return &hashtableC{bits: make([]uint64, (m+63)/64), m: m}, nil
	case "apbf":
		return newAPBF(memory, n)
	case "exact":
		return &exactC{set: make(map[string]struct{}, n)}, nil
	}
	return nil, fmt.Errorf("%w: %q (want some of %v)", ErrLayout, name, Layouts)
}

// stateContender is a real urldedupd state in a temporary directory.
type stateContender struct {
	l      layout.Contender
	st     *state.State
	signer *signature.Signer
	sigs   []signature.Signature
	path   string
}

func newStateContender(l layout.Contender, memory int64, n uint64, dir string) (*stateContender, error) {
	spec, size, filter := l.CompareState(memory, n)
	in := state.Init{Spec: spec, Size: size, Filter: filter}
	if w, ok := l.(layout.WindowContender); ok {
		in.Window = w.CompareWindow()
	}
	m, err := in.Meta(time.Now())
	if err != nil {
		return nil, err
	}
	path, err := os.MkdirTemp(dir, "urldedupd-compare-"+spec.Layout.Name()+"-")
	if err != nil {
		return nil, err
	}
	st, err := state.Open(context.Background(), filepath.Join(path, "state"), &state.Options{Create: true, Spec: &m.Spec, New: &m})
	if err != nil {
		os.RemoveAll(path)
		return nil, err
	}
	return &stateContender{l: l, st: st, signer: st.Signer(), path: path}, nil
}

// report measures the state, for the layouts whose words or formula need
// it.
func (c *stateContender) report() (layout.Report, error) { return c.st.Report(context.Background()) }

func (c *stateContender) info() Info {
	m := c.st.Meta()
	params, bytes, how := c.l.CompareInfo(m, c.report)
	return Info{Layout: m.Spec.Layout.Name(), Params: params, Bytes: bytes, Persistent: true, ExactlyOnce: how}
}

func (c *stateContender) decide(urls [][]byte, seen []bool, dryRun bool) error {
	c.sigs = c.sigs[:0]
	for _, u := range urls {
		s, _ := c.signer.Sign(u)
		c.sigs = append(c.sigs, s)
	}
	return c.st.Decide(context.Background(), c.sigs, seen, dryRun)
}

// theory is each layout's formula (layout.Contender's Theory).
func (c *stateContender) theory(n uint64) float64 {
	return c.l.Theory(c.st.Meta(), n, c.report)
}

func (c *stateContender) close() error {
	err := c.st.Close()
	if rerr := os.RemoveAll(c.path); err == nil {
		err = rerr
	}
	return err
}

type bloomC struct{ f *bloom.Filter }

func (c *bloomC) info() Info {
	return Info{Layout: "bloom-patent", Params: fmt.Sprintf("m=%d bits, k=%d (CRC32, MD5, SHA1 words, as the patent's comparison)", c.f.M(), c.f.K()),
		Bytes: int64(c.f.M() / 8), ExactlyOnce: "no (one process's memory; the bloom layout: a lock)"}
}

func (c *bloomC) decide(urls [][]byte, seen []bool, dryRun bool) error {
	for i, u := range urls {
		p := bloom.Hash(u, c.f.K())
		if dryRun {
			seen[i] = c.f.Test(p)
		} else {
			seen[i] = c.f.TestAndSet(p)
		}
	}
	return nil
}

func (c *bloomC) theory(n uint64) float64 { return bloom.FalseDup(c.f.M(), c.f.K(), n) }
func (c *bloomC) close() error            { return nil }

// hashtableC is Zheng et al.'s bitmap hash table: a bitmap in memory
// indexed by a 32-bit string hash (FNV-1a here), not persisted.
type hashtableC struct {
	bits []uint64
	m    uint64
}

func (c *hashtableC) info() Info {
	return Info{Layout: "hashtable", Params: fmt.Sprintf("m=%d bits, FNV-1a 32", c.m), Bytes: int64(c.m / 8), ExactlyOnce: "no (one process's memory)"}
}

func (c *hashtableC) decide(urls [][]byte, seen []bool, dryRun bool) error {
	h := fnv.New32a()
	for i, u := range urls {
		h.Reset()
		h.Write(u)
		b := uint64(h.Sum32()) % c.m
		w, bit := &c.bits[b>>6], uint64(1)<<(b&63)
		seen[i] = *w&bit != 0
		if !dryRun {
			*w |= bit
		}
	}
	return nil
}

func (c *hashtableC) theory(n uint64) float64 {
	return -math.Expm1(float64(n) * math.Log1p(-1/float64(c.m)))
}
func (c *hashtableC) close() error { return nil }

// exactC is the truth: a set of the URLs themselves.
type exactC struct {
	set   map[string]struct{}
	bytes int64
}

func (c *exactC) info() Info {
	return Info{Layout: "exact", Params: "Go map of the normalized URLs", Bytes: c.bytes, ExactlyOnce: "no (one process's memory)"}
}

func (c *exactC) decide(urls [][]byte, seen []bool, dryRun bool) error {
	for i, u := range urls {
		_, seen[i] = c.set[string(u)]
		if !seen[i] && !dryRun {
			c.set[string(u)] = struct{}{}
			c.bytes += int64(len(u)) + 16 + 8 // the string, its header, the map's share (a rough floor)
		}
	}
	return nil
}

func (c *exactC) theory(uint64) float64 { return 0 }
func (c *exactC) close() error          { return nil }

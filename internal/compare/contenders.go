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
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/keyed"
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
// layouts (in real temporary states), the patent's comparison Bloom filter
// exactly as the patent drew its positions (in memory), Zheng et al.'s
// bitmap hash table and the exact set.
var Layouts = []string{"bitmap", "keyed", "bloom", "mdbf", "dsbf", "bloom-patent", "hashtable", "exact"}

// newContender makes the contender name with memory bytes (where its rules
// allow), planned for n distinct URLs, with temporary state under dir.
func newContender(name string, memory int64, n uint64, dir string) (contender, error) {
	bitsOf := func() uint64 { return min(uint64(memory)*8, bloom.MaxBits) }
	switch name {
	case "bitmap", "keyed", "bloom", "mdbf", "dsbf":
		return newStateContender(name, memory, n, dir)
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
	case "exact":
		return &exactC{set: make(map[string]struct{}, n)}, nil
	}
	return nil, fmt.Errorf("%w: %q (want some of %v)", ErrLayout, name, Layouts)
}

// stateContender is a real urldedupd state in a temporary directory.
type stateContender struct {
	st     *state.State
	signer *signature.Signer
	sigs   []signature.Signature
	path   string
	geo    keyed.Geometry
}

func newStateContender(name string, memory int64, n uint64, dir string) (*stateContender, error) {
	in := state.Init{Spec: format.Default}
	if name != "bitmap" {
		l, err := format.ParseLayout(name)
		if err != nil {
			return nil, err
		}
		in = state.Init{Spec: format.Spec{Layout: l, Algorithm: signature.SipHash, Mode: signature.Safe}, Size: keyedSize(memory)}
		if l.Filter() {
			in.Size, in.Filter = filterPlan(l, memory, n)
		}
	}
	m, err := in.Meta(time.Now())
	if err != nil {
		return nil, err
	}
	path, err := os.MkdirTemp(dir, "urldedupd-compare-"+name+"-")
	if err != nil {
		return nil, err
	}
	st, err := state.Open(context.Background(), filepath.Join(path, "state"), &state.Options{Create: true, Spec: &m.Spec, New: &m})
	if err != nil {
		os.RemoveAll(path)
		return nil, err
	}
	c := &stateContender{st: st, signer: st.Signer(), path: path}
	c.geo, _ = keyed.NewGeometry(m.Sizes.ShardBytes)
	return c, nil
}

func (c *stateContender) info() Info {
	m := c.st.Meta()
	i := Info{Layout: m.Spec.Layout.Name(), Bytes: m.Sizes.Bytes(), Persistent: true, ExactlyOnce: "yes: one atomic operation"}
	f := m.Filter
	switch m.Spec.Layout {
	case format.Keyed:
		i.Params = fmt.Sprintf("SipHash-1-3, 32-bit fingerprints, 16-slot buckets, %d MiB shards", m.Sizes.ShardBytes>>20)
	case format.Bitmap:
		i.Params = "CRC32, 1 bit per signature"
	case format.Bloom:
		i.Params = fmt.Sprintf("m=%d bits, k=%d (keyed SipHash-1-3)", m.Sizes.Bytes()*8, f.K)
	case format.MDBF:
		i.Params = fmt.Sprintf("S=%d, N=%d, k=%d", f.Groups, f.V1Bits, f.K)
	case format.DSBF:
		rep, _ := c.st.Report(context.Background())
		i.Params = fmt.Sprintf("c=%d, m=%d bits/leaf, k=%d, fmax=%.2g; height %d, %d leaves", f.Children,
			m.Sizes.ShardBytes*8-format.LeafHeaderBytes*8, f.K, f.FMax, rep.Height, rep.Leaves)
		i.Bytes = int64(rep.Leaves) * m.Sizes.ShardBytes // the leaves in use; the state holds 256
	}
	if m.Spec.Layout.Filter() {
		i.ExactlyOnce = "yes: an OFD lock per batch"
	}
	return i
}

func (c *stateContender) decide(urls [][]byte, seen []bool, dryRun bool) error {
	c.sigs = c.sigs[:0]
	for _, u := range urls {
		s, _ := c.signer.Sign(u)
		c.sigs = append(c.sigs, s)
	}
	return c.st.Decide(context.Background(), c.sigs, seen, dryRun)
}

// theory is each layout's formula: from n for bitmap, keyed and bloom;
// from the state measured for mdbf (the URLs loaded in their own group)
// and dsbf (the tree as it has grown).
func (c *stateContender) theory(n uint64) float64 {
	m := c.st.Meta()
	switch m.Spec.Layout {
	case format.Keyed:
		return keyed.Predict(float64(n) / float64(uint64(c.geo.Buckets())*keyed.Shards)).FalseDup()
	case format.Bitmap:
		return state.BitmapFalseDup(n)
	case format.Bloom:
		return bloom.FalseDup(uint64(m.Sizes.Bytes())*8, m.Filter.K, n)
	}
	rep, err := c.st.Report(context.Background())
	if err != nil {
		return math.NaN()
	}
	return rep.FalseDupChance
}

// keyedSize is the keyed state for memory: the largest of 256 shards of a
// power of two that fits it, and at least the smallest, 512 MiB.
func keyedSize(memory int64) int64 {
	size := int64(format.Shards * format.ShardBytes)
	for size*2 <= min(memory, format.Shards*format.MaxShardBytes) {
		size *= 2
	}
	return size
}

// filterPlan sizes a Bloom-family state for compare: the largest state
// that fits memory (a power of two from 1 MiB to 512 MiB), and the
// parameters its URLs n call for: bloom's best k; the MDBF paper's S and
// k (4 and 4); a DSBF whose first c leaves together fit memory (leaves of
// at most 2 MiB, its largest, so c is 4, or up to 16 where memory allows),
// k best for n/c URLs a leaf and fmax four times a classic filter's rate
// at n, so that it splits only when given more than that.
func filterPlan(l format.Layout, memory int64, n uint64) (int64, format.Filter) {
	size := int64(1) << 20
	for size*2 <= min(memory, 512<<20) {
		size *= 2
	}
	n = max(n, 1)
	bits := uint64(size) * 8
	switch l {
	case format.Bloom:
		return size, format.Filter{K: max(1, min(10, int(math.Round(float64(bits)/float64(n)*math.Ln2))))}
	case format.MDBF:
		return size, format.Filter{K: 4, Groups: 4}
	}
	leaf := int64(format.MinFilterShardBytes)
	for leaf*2 <= min(memory/4, format.ShardBytes) {
		leaf *= 2
	}
	c := int(max(4, min(format.MaxChildren, memory/leaf)))
	m := uint64(leaf)*8 - format.LeafHeaderBytes*8
	k := max(1, min(format.MaxK, int(math.Round(float64(m)/float64(max(n/uint64(c), 1))*math.Ln2))))
	classic := math.Pow(-math.Expm1(-float64(k)*float64(n)/float64(m*uint64(c))), float64(k))
	return leaf * format.Shards, format.Filter{K: k, Children: c, FMax: math.Min(math.Max(4*classic, 1e-12), 0.5)}
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

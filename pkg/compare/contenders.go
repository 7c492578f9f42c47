package compare

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/urldedupd/urldedupd/pkg/bloom"
	"github.com/urldedupd/urldedupd/pkg/dsbf"
	"github.com/urldedupd/urldedupd/pkg/format"
	"github.com/urldedupd/urldedupd/pkg/keyed"
	"github.com/urldedupd/urldedupd/pkg/mdbf"
	"github.com/urldedupd/urldedupd/pkg/signature"
	"github.com/urldedupd/urldedupd/pkg/state"
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

// Layouts are the contenders compare knows, in table order.
var Layouts = []string{"bitmap", "keyed", "bloom", "mdbf", "dsbf", "hashtable", "exact"}

// newContender makes the contender name with memory bytes (where its rules
// allow), planned for n distinct URLs, with temporary state under dir.
func newContender(name string, memory int64, n uint64, dir string) (contender, error) {
	bitsOf := func() uint64 { return min(uint64(memory)*8, bloom.MaxBits) }
	switch name {
	case "bitmap", "keyed":
		return newStateContender(name, memory, dir)
	case "bloom":
		m := bitsOf()
		k := int(math.Round(float64(m) / float64(max(n, 1)) * math.Ln2))
		k = max(1, min(bloom.MaxK, k))
		f, err := bloom.New(make([]byte, (m+63)/64*8), m, k)
		if err != nil {
			return nil, err
		}
		return &bloomC{f: f}, nil
	case "mdbf":
		const s, k = 4, 4 // the paper's S and k
		p := mdbf.Params{S: s, K: k, N: uint64(float64(memory*8) / (s * (1 + 1.0/k)))}
		f, err := mdbf.New(p)
		if err != nil {
			return nil, err
		}
		return &mdbfC{f: f, p: p}, nil
	case "dsbf":
		const c = 4
		m := uint64(memory) * 8 / c
		k := int(math.Round(float64(m) / float64(max(n/c, 1)) * math.Ln2))
		k = max(1, min(32, k))
		fmax := math.Max(1e-12, 4*math.Pow(-math.Expm1(-float64(k)*float64(n)/float64(m*c)), float64(k)))
		p := dsbf.Params{C: c, LeafBits: max(m, 64), K: k, FMax: math.Min(fmax, 0.5)}
		t, err := dsbf.New(p)
		if err != nil {
			return nil, err
		}
		return &dsbfC{t: t, p: p}, nil
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

func newStateContender(name string, memory int64, dir string) (*stateContender, error) {
	in := state.Init{Spec: format.Default}
	if name == "keyed" {
		in = state.Init{Spec: format.KeyedSpec(signature.Safe), Size: memory}
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
	if m.Spec.Layout == format.Keyed {
		i.Params = fmt.Sprintf("SipHash-1-3, 32-bit fingerprints, 16-slot buckets, %d MiB shards", m.Sizes.ShardBytes>>20)
	} else {
		i.Params = "CRC32, 1 bit per signature"
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

func (c *stateContender) theory(n uint64) float64 {
	if c.st.Meta().Spec.Layout == format.Keyed {
		return keyed.Predict(float64(n) / float64(uint64(c.geo.Buckets())*keyed.Shards)).FalseDup()
	}
	return state.BitmapFalseDup(n)
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
	return Info{Layout: "bloom", Params: fmt.Sprintf("m=%d bits, k=%d (CRC32, MD5, SHA1 words)", c.f.M(), c.f.K()),
		Bytes: int64(c.f.M() / 8), ExactlyOnce: "no (in memory; as a layout: a lock)"}
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

type mdbfC struct {
	f *mdbf.Filter
	p mdbf.Params
}

func (c *mdbfC) info() Info {
	return Info{Layout: "mdbf", Params: fmt.Sprintf("S=%d, N=%d, k=%d", c.p.S, c.p.N, c.p.K), Bytes: int64(c.p.Bits() / 8),
		ExactlyOnce: "no (in memory; as a layout: a lock)"}
}

func (c *mdbfC) decide(urls [][]byte, seen []bool, dryRun bool) error {
	for i, u := range urls {
		h := mdbf.HashOf(u)
		if dryRun {
			seen[i] = c.f.Test(h)
		} else {
			seen[i] = c.f.TestAndSet(h)
		}
	}
	return nil
}

// theory is the formula at the URLs the filter holds in their own group: a
// new URL found present in another group is not inserted into its own.
func (c *mdbfC) theory(uint64) float64 { return c.p.FalsePositive(c.f.Loaded()) }
func (c *mdbfC) close() error          { return nil }

type dsbfC struct {
	t *dsbf.Tree
	p dsbf.Params
}

func (c *dsbfC) info() Info {
	s := c.t.Shape()
	return Info{Layout: "dsbf", Params: fmt.Sprintf("c=%d, m=%d bits/leaf, k=%d, fmax=%.2g; height %d, %d leaves", c.p.C, c.p.LeafBits, c.p.K, c.p.FMax, s.Height, len(s.Live)+s.Frozen),
		Bytes: int64(s.Bits / 8), ExactlyOnce: "no (in memory; as a layout: a lock per leaf)"}
}

func (c *dsbfC) decide(urls [][]byte, seen []bool, dryRun bool) error {
	for i, u := range urls {
		h := dsbf.HashOf(u)
		if dryRun {
			seen[i] = c.t.Test(h)
		} else {
			seen[i] = c.t.TestAndSet(h)
		}
	}
	return nil
}

// theory is the tree's formula on its shape now (n is in the shape).
func (c *dsbfC) theory(uint64) float64 { return c.t.FalsePositive() }
func (c *dsbfC) close() error          { return nil }

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

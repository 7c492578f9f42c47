package dsbf

import (
	"math"
	"math/bits"
	"sync"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// The public SipHash keys of the two hashes (any fixed values do).
const (
	key1a, key1b = 0x6473626620683120, 0x75726c6465647570 // "dsbf h1 ", "urldedup"
	key2a, key2b = 0x6473626620683220, 0x75726c6465647570
)

// Hash is a URL's pair of hashes, from which its positions and locations
// follow.
type Hash struct{ h1, h2 uint64 }

// HashOf hashes b, a URL in normal form.
func HashOf(b []byte) Hash {
	return Hash{signature.SipHash13(key1a, key1b, b), signature.SipHash13(key2a, key2b, b) | 1}
}

// loc is the location hash of depth d: which of c children.
func (h Hash) loc(depth, c int) int {
	x := h.h2 + uint64(depth)*0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	hi, _ := bits.Mul64(x, uint64(c)) // ⌊x·c/2^64⌋: uniform over 0..c−1
	return int(hi)
}

// A node is the root (depth 0: only a router), a live leaf, or a frozen
// leaf that has split (it keeps its bits for queries and routes to its
// children).
type node struct {
	depth    int
	children int // index of the first of C children; 0: none (a leaf)
	bits     []uint64
	n        uint64 // URLs stored
	limit    uint64 // split when n reaches it
}

// Tree is a DSBF in memory. It is safe for concurrent use (one mutex:
// this is the reference the persistent layout is measured against).
type Tree struct {
	p     Params
	mu    sync.Mutex
	nodes []node
}

// New returns a tree of p: a root and its C first-level leaves.
func New(p Params) (*Tree, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	t := &Tree{p: p, nodes: []node{{depth: 0}}}
	t.split(0)
	return t, nil
}

// split gives node i its C children.
func (t *Tree) split(i int) {
	d := t.nodes[i].depth + 1
	t.nodes[i].children = len(t.nodes)
	for range t.p.C {
		t.nodes = append(t.nodes, node{depth: d, bits: make([]uint64, (t.p.LeafBits+63)/64), limit: t.p.LeafCapacity(d)})
	}
}

func (t *Tree) has(n *node, h Hash) bool {
	m := t.p.LeafBits
	for i := range uint64(t.p.K) {
		b := (h.h1 + i*h.h2) % m
		if n.bits[b>>6]&(1<<(b&63)) == 0 {
			return false
		}
	}
	return true
}

func (t *Tree) set(n *node, h Hash) {
	m := t.p.LeafBits
	for i := range uint64(t.p.K) {
		b := (h.h1 + i*h.h2) % m
		n.bits[b>>6] |= 1 << (b & 63)
	}
}

// walk returns the live leaf of h and whether a node on the way (a frozen
// leaf, or the live one) holds it.
func (t *Tree) walk(h Hash) (leaf int, found bool) {
	i := 0
	for {
		n := &t.nodes[i]
		if n.depth > 0 && t.has(n, h) {
			found = true
		}
		if n.children == 0 {
			return i, found
		}
		i = n.children + h.loc(n.depth, t.p.C)
	}
}

// Test reports whether h is held: a duplicate, or a false positive.
func (t *Tree) Test(h Hash) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, found := t.walk(h)
	return found
}

// TestAndSet stores h unless it is held, and reports whether it was.
// A leaf that reaches its capacity splits.
func (t *Tree) TestAndSet(h Hash) (seen bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	leaf, found := t.walk(h)
	if found {
		return true
	}
	n := &t.nodes[leaf]
	t.set(n, h)
	if n.n++; n.n >= n.limit {
		t.split(leaf)
	}
	return false
}

// Shape is a tree's shape: its height (the depth of its deepest leaf), its
// live leaves and the URLs each holds (in node order), its frozen leaves,
// and its bits in all.
type Shape struct {
	Height int
	Live   []uint64
	Frozen int
	Bits   uint64
}

// Shape returns the tree's shape now.
func (t *Tree) Shape() Shape {
	t.mu.Lock()
	defer t.mu.Unlock()
	var s Shape
	for _, n := range t.nodes[1:] {
		s.Height = max(s.Height, n.depth)
		s.Bits += t.p.LeafBits
		if n.children == 0 {
			s.Live = append(s.Live, n.n)
		} else {
			s.Frozen++
		}
	}
	return s
}

// FalsePositive is the tree's chance, by the formulas, that a URL it does
// not hold is reported held: 1 − Π(1 − fᵢ) over a path, averaged over the
// paths (each taken with the chance the location hashes give it), with
// fᵢ = (1 − e^(−k·nᵢ/m))^k for every leaf, frozen or live, on the path.
func (t *Tree) FalsePositive() float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var walk func(i int, weight, pass float64) float64
	walk = func(i int, weight, pass float64) float64 {
		n := &t.nodes[i]
		if n.depth > 0 {
			f := math.Pow(-math.Expm1(-float64(t.p.K)*float64(n.n)/float64(t.p.LeafBits)), float64(t.p.K))
			pass *= 1 - f
		}
		if n.children == 0 {
			return weight * (1 - pass)
		}
		sum := 0.0
		for c := range t.p.C {
			sum += walk(n.children+c, weight/float64(t.p.C), pass)
		}
		return sum
	}
	return walk(0, 1, 1)
}

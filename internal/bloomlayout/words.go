package bloomlayout

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
)

// Help is the layout's paragraph in init's help (layout.Words); the
// last of the family (dsbf) ends with what the three share.
func (f family) Help() string {
	switch f.id {
	case format.Bloom:
		return `  bloom   the patent's comparison, a classic Bloom filter over the whole
          state (1 MiB to 512 MiB) with --k positions per URL.
`
	case format.MDBF:
		return `  mdbf    the multi-dimensional Bloom filter: --groups groups of a V1 and
          a V2 of 1/k of its bits; a URL goes into one group and is found
          in any.
`
	}
	return `  dsbf    the dynamic splittable Bloom filter: each shard is a leaf; a URL
          goes to one of --children leaves, and a leaf past its bound
          splits into children, keeping the false-dup chance under --fmax
          as the URLs grow (until its 256 leaves are used).
  bloom, mdbf and dsbf sign with SipHash-1-3 under a key, as keyed does;
  in a state directory they serialize batches of all processes with a
  lock the kernel releases when a process dies; bloom and mdbf live in
  state directories only, dsbf in Redis and Redis Cluster too
  (docs/literature.md).
`
}

// Parameters names a state's filter parameters (layout.Words).
func (f family) Parameters(m format.Meta) string {
	p := m.Filter
	switch f.id {
	case format.MDBF:
		return fmt.Sprintf("k %d, %d groups of V1 %d bits + V2 %d bits", p.K, p.Groups, p.V1Bits, p.V1Bits/uint64(p.K))
	case format.DSBF:
		return fmt.Sprintf("k %d, %d children, fmax %g", p.K, p.Children, p.FMax)
	}
	return fmt.Sprintf("k %d", p.K)
}

var _ layout.Words = family{}

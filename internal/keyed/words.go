package keyed

import (
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
)

// Help is the keyed layout's paragraph in init's help (layout.Words).
func (keyedLayout) Help() string {
	return `  keyed   32-bit fingerprints in 64-byte buckets, placed by SipHash-1-3
          under a secret key made at init (in the state directory, mode
          0600, never printed; in Redis, in the metadata key). A decision is
          one compare-and-swap on at most two cache lines. In 512 MiB:
          about 3e-10 false duplicates at 10M URLs and 3e-9 at 100M; past
          its capacity a URL whose buckets are full is answered new but not
          stored (stats shows the chance). No collision can be forged
          without the key.
`
}

// Parameters: a keyed state has none beyond its size and key.
func (keyedLayout) Parameters(format.Meta) string { return "" }

var _ layout.Words = keyedLayout{}

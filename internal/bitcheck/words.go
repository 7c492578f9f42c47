package bitcheck

import (
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/layout"
)

// Help is the bitmap's paragraph in init's help (layout.Words).
func (bitmap) Help() string {
	return `  bitmap  the patent's: one bit per CRC32 value, 256 shards of 2 MiB. Any
          tool can find a URL's bit with zlib's CRC32. The chance that a new
          URL is reported a duplicate is the fill: n/2^32 after n URLs
          (0.23% at 10M, 2.3% at 100M), and anyone can forge a URL whose
          CRC32 equals a URL already seen, hiding it.
`
}

// Parameters: a bitmap has none beyond its format.
func (bitmap) Parameters(format.Meta) string { return "" }

var _ layout.Words = bitmap{}

package layout_test

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/layout"
	_ "github.com/urldedupd/urldedupd/internal/state" // registers every layout of this build
)

// Every layout of this build, with how it merges.
func ExampleAll() {
	how := map[layout.Merge]string{layout.MergeOr: "OR", layout.MergeReinsert: "re-insert", layout.MergeCopy: "copy whole"}
	for _, l := range layout.All() {
		fmt.Printf("%s (%s): %s\n", l.Name(), l.ID(), how[l.Merge()])
	}
	// Output:
	// bitmap (bitmap-1bit): OR
	// keyed (keyed-fp32x16): re-insert
	// bloom (bloom-dh): OR
	// mdbf (mdbf-v1v2): OR
	// dsbf (dsbf-leaves): copy whole
	// keyed-window (keyed-window-fp26t6): copy whole
	// bitmap-window (bitmap-window-ring): copy whole
}

package state_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// BenchmarkDecide: batches of 1024 new URLs through State.Decide on a
// directory of each layout (bitmap and keyed 512 MiB, the Bloom family
// 64 MiB): what the layout adds to a decision, through the state.
func BenchmarkDecide(b *testing.B) {
	for _, l := range format.Layouts {
		b.Run(l.Name(), func(b *testing.B) {
			spec := format.Spec{Layout: l, Algorithm: signature.IEEE, Mode: signature.Safe}
			in := state.Init{Spec: spec}
			if l.Keyed() {
				in.Spec.Algorithm = signature.SipHash
				if l != format.Keyed {
					in.Size = 64 << 20
				}
			}
			m, err := in.Meta(time.Now())
			if err != nil {
				b.Fatal(err)
			}
			st, err := state.Open(context.Background(), filepath.Join(b.TempDir(), "s"), &state.Options{Create: true, New: &m})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			signer := st.Signer()
			const batch = 1024
			sigs := make([]signature.Signature, batch*64)
			for i := range sigs {
				sigs[i], _ = signer.Sign(fmt.Appendf(nil, "http://bench.example/%d", i))
			}
			seen := make([]bool, batch)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				j := i % 64 * batch
				if err := st.Decide(ctx, sigs[j:j+batch], seen, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package inflight_test

import (
	"context"
	"fmt"
	"os"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/inflight"
	"github.com/urldedupd/urldedupd/internal/layout"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func ExampleWindow() {
	dir, _ := os.MkdirTemp("", "inflight")
	defer os.RemoveAll(dir)
	d, err := shardfile.Open(dir+"/state", &shardfile.Options{Create: true})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	// Any Decider: a local Set here, Redis in production.
	var backend layout.Decider = bitcheck.New(d)

	s := signature.NewSigner(signature.IEEE, signature.Safe)
	urls := []string{"http://a.example/", "http://b.example/", "HTTP://A.EXAMPLE:80/", "http://b.example/"}
	sigs := make([]signature.Signature, len(urls))
	for i, u := range urls {
		sigs[i], _ = s.Sign([]byte(u))
	}
	seen := make([]bool, len(sigs))

	w := inflight.NewWindow[int](context.Background(), backend, 2, false)
	defer w.Close()
	w.Send(sigs[:2], seen[:2], 0) // batch 0: URLs 0 and 1
	w.Send(sigs[2:], seen[2:], 2) // batch 1, in flight with batch 0
	for w.Len() > 0 {
		first, err := w.Recv()
		if err != nil {
			panic(err)
		}
		for i := first; i < first+2; i++ {
			fmt.Println(seen[i], urls[i])
		}
	}
	// Output:
	// false http://a.example/
	// false http://b.example/
	// true HTTP://A.EXAMPLE:80/
	// true http://b.example/
}

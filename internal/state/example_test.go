package state_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// Open a state directory (a redis:// address opens Redis the same way),
// ask it how to decide, and decide a batch of URLs.
func Example() {
	tmp, _ := os.MkdirTemp("", "state-example")
	defer os.RemoveAll(tmp)
	st, err := state.Open(context.Background(), filepath.Join(tmp, "s"), &state.Options{Create: true})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	fmt.Println("in flight:", st.InFlight()) // 0: it answers at once

	signer := st.Signer()
	var sigs []signature.Signature
	for _, u := range []string{"http://example.com/", "HTTP://EXAMPLE.COM:80/", "http://example.com/x"} {
		sig, _ := signer.Sign([]byte(u))
		sigs = append(sigs, sig)
	}
	seen := make([]bool, len(sigs))
	if err := st.Decide(context.Background(), sigs, seen, false); err != nil {
		panic(err)
	}
	fmt.Println(seen)
	// Output:
	// in flight: 0
	// [false true false]
}

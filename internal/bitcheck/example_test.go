package bitcheck_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/urldedupd/urldedupd/internal/bitcheck"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func Example() {
	tmp, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(tmp)

	d, err := shardfile.Open(filepath.Join(tmp, "state"), &shardfile.Options{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	set := bitcheck.New(d)
	signer := signature.NewSigner(d.Meta().Spec.Algorithm, d.Meta().Spec.Mode)

	for _, url := range []string{"http://example.com/a", "HTTP://EXAMPLE.com:80/a", "http://example.com/b"} {
		sig, _ := signer.Sign([]byte(url))
		fmt.Println(set.TestAndSet(sig), url)
	}
	// Output:
	// false http://example.com/a
	// true HTTP://EXAMPLE.com:80/a
	// false http://example.com/b
}

package signature_test

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/signature"
)

func ExampleSigner_Sign() {
	s := signature.NewSigner(signature.IEEE, signature.Safe)
	a, _ := s.Sign([]byte("HTTP://Example.COM:80/a/./b#top"))
	b, _ := s.Sign([]byte("http://example.com/a/b"))
	fmt.Printf("%v %v shard=%02x bit=%06x\n", a == b, a, a.Shard(), a.Bit())
	// Output: true a0a631cb shard=a0 bit=a631cb
}

package bloom_test

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/bloom"
)

// A filter of the patent's experiment: m = 8,000,000 bits, k = 5 (CRC32
// and MD5).
func Example() {
	const m, k = 8_000_000, 5
	f, err := bloom.New(make([]byte, m/8), m, k)
	if err != nil {
		panic(err)
	}
	for _, u := range []string{"http://a.example/", "http://b.example/", "http://a.example/"} {
		fmt.Println(f.TestAndSet(bloom.Hash([]byte(u), k)), u)
	}
	fmt.Printf("after 75,012 URLs: %.2g\n", bloom.FalseDup(m, k, 75_012))
	// Output:
	// false http://a.example/
	// false http://b.example/
	// true http://a.example/
	// after 75,012 URLs: 2e-07
}

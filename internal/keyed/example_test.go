package keyed_test

import (
	"fmt"

	"github.com/urldedupd/urldedupd/internal/keyed"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func Example() {
	// 256 shards of 4 KiB in memory; a state maps its shard files instead.
	mem := make([]byte, 256*4096)
	shards := make([][]byte, 256)
	for i := range shards {
		shards[i] = mem[i*4096 : (i+1)*4096]
	}
	tab, err := keyed.NewTable(shards, false)
	if err != nil {
		panic(err)
	}
	key := keyed.Key{1, 2, 3} // a state makes one with keyed.NewKey
	h := keyed.NewHasher(key, signature.Safe)
	urls := [][]byte{
		[]byte("http://example.com/a"),
		[]byte("HTTP://EXAMPLE.COM:80/a#top"), // the same URL
		[]byte("http://example.com/b"),
	}
	locs := make([]keyed.Loc, len(urls))
	res := make([]keyed.Result, len(urls))
	h.LocateBatch(tab.Geometry(), urls, locs)
	c := tab.DecideBatch(locs, res, false)
	fmt.Println(res, c.New, c.Dup, c.Full)
	fmt.Printf("next new URL a false duplicate: %.1g\n", tab.Fill().Occupancy().FalseDup())
	// Output:
	// [new dup new] 2 1 0
	// next new URL a false duplicate: 3e-14
}

func ExamplePlan() {
	g, err := keyed.Plan(100_000_000, 1e-6)
	fmt.Println(g.StateBytes()>>20, "MiB", err)
	_, err = keyed.Plan(1_000_000_000, 1e-12)
	fmt.Println(err != nil)
	// Output:
	// 1024 MiB <nil>
	// true
}

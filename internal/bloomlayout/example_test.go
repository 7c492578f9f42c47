package bloomlayout_test

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/urldedupd/urldedupd/internal/bloomlayout"
	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// A DSBF of 256 leaves of 4 KiB in this process's memory (a state
// directory's Set gets its shards from shardfile and a lock file): a URL
// is new once, then a duplicate; the tree starts with its c leaves.
func Example() {
	key := signature.Key{1, 2, 3}
	asked := format.NewMeta(format.Spec{Layout: format.DSBF, Algorithm: signature.SipHash, Mode: signature.Safe}, time.Now())
	asked.Sizes.ShardBytes, asked.Filter, asked.Key = 4<<10, format.Filter{K: 7, Children: 3, FMax: 0.01}, &key
	meta, err := format.Creating(&asked.Spec, &asked, time.Now())
	if err != nil {
		panic(err)
	}
	mem := make([]uint64, format.Shards*4<<10/8) // 8-byte aligned, as a mapping is
	shards := make([][]byte, format.Shards)
	for i := range shards {
		shards[i] = bytesOf(mem[i*512 : (i+1)*512])
	}
	set, err := bloomlayout.New(meta, shards, bloomlayout.Options{})
	if err != nil {
		panic(err)
	}
	signer := signature.NewKeyedSigner(key, signature.Safe)
	sig, _ := signer.Sign([]byte("http://example.com/a"))
	seen := make([]bool, 2)
	if err := set.Decide(context.Background(), []signature.Signature{sig, sig}, seen, false); err != nil {
		panic(err)
	}
	rep, _ := set.Report()
	fmt.Println("seen:", seen, "leaves:", rep.Leaves, "URLs:", rep.Distinct)
	// Output: seen: [false true] leaves: 3 URLs: 1
}

// bytesOf views words as bytes.
func bytesOf(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)
}

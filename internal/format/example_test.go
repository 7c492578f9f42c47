package format_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

// A state's metadata, as written to urldedupd.meta or a Redis key, read
// back and checked against what a caller requires.
func Example() {
	m := format.NewMeta(format.Default, time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC))
	text, _ := m.MarshalText()
	fmt.Print(string(text))

	var back format.Meta
	if err := back.UnmarshalText(text); err != nil {
		panic(err)
	}
	err := back.Require("state", format.Spec{Algorithm: signature.IEEE, Mode: signature.None})
	fmt.Println(errors.Is(err, format.ErrMismatch))
	// Output:
	// urldedupd-state 1
	// layout bitmap-1bit
	// signature crc32
	// normalize safe
	// bit-order lsb0
	// shards 256
	// shard-bytes 2097152
	// created 2026-11-22T14:00:00Z
	// checksum 296a6ae6
	// true
}

package shardfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urldedupd/urldedupd/pkg/shardfile"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

func ExampleOpen() {
	tmp, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "state")

	// Nothing there yet.
	_, err := shardfile.Open(dir, nil)
	fmt.Println(errors.Is(err, shardfile.ErrNoState))

	// Create it, asking for raw-byte signatures.
	f := &shardfile.Format{Algorithm: signature.IEEE, Mode: signature.None}
	d, err := shardfile.Open(dir, &shardfile.Options{Create: true, Format: f})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Created(), d.Meta().Format.Mode, len(d.Shard(0xff)))
	d.Close()

	// Asking for another format is refused.
	_, err = shardfile.Open(dir, &shardfile.Options{Format: &shardfile.DefaultFormat})
	fmt.Println(errors.Is(err, shardfile.ErrMetaMismatch))
	// Output:
	// true
	// true none 2097152
	// true
}

package shardfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func ExampleOpen() {
	tmp, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "state")

	// Nothing there yet.
	_, err := shardfile.Open(dir, nil)
	fmt.Println(errors.Is(err, format.ErrNoState))

	// Create it, asking for raw-byte signatures.
	f := &format.Spec{Algorithm: signature.IEEE, Mode: signature.None}
	d, err := shardfile.Open(dir, &shardfile.Options{Create: true, Spec: f})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Created(), d.Meta().Spec.Mode, len(d.Shard(0xff)))
	d.Close()

	// Asking for another format is refused.
	_, err = shardfile.Open(dir, &shardfile.Options{Spec: &format.Default})
	fmt.Println(errors.Is(err, format.ErrMismatch))
	// Output:
	// true
	// true none 2097152
	// true
}

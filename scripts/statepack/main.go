// Command statepack packs a state directory into a compact file, the form
// the layout compatibility test keeps as testdata: every regular file of
// the directory, by name, with its size and its non-zero 4 KiB pages only
// (a state's shards are sparse), gzip-compressed.
//
//	statepack DIR OUT.pages.gz
//
// The format, after gzip: for each file, a uint16 name length, the name, a
// uint64 size, a uint32 page count, then each page's uint64 offset and its
// bytes (4096, or fewer at the end of the file); all big-endian. The
// reader is internal/state's compat_test.go.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

const page = 4096

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: statepack DIR OUT.pages.gz")
		os.Exit(2)
	}
	if err := pack(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "statepack:", err)
		os.Exit(1)
	}
}

func pack(dir, out string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w := func(v any) { _ = binary.Write(zw, binary.BigEndian, v) }
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		var offs []uint64
		for off := 0; off < len(data); off += page {
			if !bytes.Equal(data[off:min(off+page, len(data))], make([]byte, min(page, len(data)-off))) {
				offs = append(offs, uint64(off))
			}
		}
		w(uint16(len(n)))
		_, _ = zw.Write([]byte(n))
		w(uint64(len(data)))
		w(uint32(len(offs)))
		for _, off := range offs {
			w(off)
			_, _ = zw.Write(data[off:min(off+page, uint64(len(data)))])
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

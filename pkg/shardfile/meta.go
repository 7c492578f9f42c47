package shardfile

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urldedupd/urldedupd/pkg/signature"
)

const (
	// MetaName is the metadata file's name inside the state directory.
	MetaName = "urldedupd.meta"
	// FormatVersion is the metadata format this build writes and reads.
	FormatVersion = 1
	// LayoutBitmap is the patent's layout: one bit per signature, the top
	// 8 bits of the signature naming the shard.
	LayoutBitmap = "bitmap-1bit"
	// BitOrder names the order of bits within a byte: least significant
	// first.
	BitOrder = "lsb0"
	// Shards is the number of shard files.
	Shards = signature.Shards
	// ShardBytes is the exact size of every shard file: 2^24 bits.
	ShardBytes = signature.BitsPerShard / 8

	metaMagic = "urldedupd-state"
)

// Meta is the content of the metadata file.
type Meta struct {
	Version  int
	Layout   string
	Format   Format
	BitOrder string
	Shards   int
	ShardLen int64
	Created  time.Time
}

// NewMeta returns the metadata of a new state of format f.
func NewMeta(f Format, now time.Time) Meta {
	return Meta{
		Version: FormatVersion, Layout: LayoutBitmap, Format: f, BitOrder: BitOrder,
		Shards: Shards, ShardLen: ShardBytes, Created: now.UTC().Truncate(time.Second),
	}
}

// MarshalText encodes m as the metadata file's bytes.
func (m Meta) MarshalText() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %d\n", metaMagic, m.Version)
	fmt.Fprintf(&b, "layout %s\n", m.Layout)
	fmt.Fprintf(&b, "signature %s\n", m.Format.Algorithm)
	fmt.Fprintf(&b, "normalize %s\n", m.Format.Mode)
	fmt.Fprintf(&b, "bit-order %s\n", m.BitOrder)
	fmt.Fprintf(&b, "shards %d\n", m.Shards)
	fmt.Fprintf(&b, "shard-bytes %d\n", m.ShardLen)
	fmt.Fprintf(&b, "created %s\n", m.Created.Format(time.RFC3339))
	fmt.Fprintf(&b, "checksum %08x\n", crc32.ChecksumIEEE(b.Bytes()))
	return b.Bytes(), nil
}

// UnmarshalText decodes and validates a metadata file: the checksum
// (ErrMetaCorrupt), then the version (ErrFormatVersion), then the layout
// (ErrLayout).
func (m *Meta) UnmarshalText(data []byte) error {
	body, sum, err := splitChecksum(data)
	if err != nil {
		return err
	}
	if got := crc32.ChecksumIEEE(body); got != sum {
		return fmt.Errorf("%w: checksum is %08x, content sums to %08x", ErrMetaCorrupt, sum, got)
	}
	fields := map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			return fmt.Errorf("%w: line %d: %q has no value", ErrMetaCorrupt, i+1, line)
		}
		fields[k] = v
	}
	ver, ok := fields[metaMagic]
	if !ok {
		return fmt.Errorf("%w: not a urldedupd metadata file", ErrMetaCorrupt)
	}
	if m.Version, err = strconv.Atoi(ver); err != nil || m.Version != FormatVersion {
		return fmt.Errorf("%w: %q (this build reads version %d)", ErrFormatVersion, ver, FormatVersion)
	}
	return m.decodeFields(fields)
}

func splitChecksum(data []byte) (body []byte, sum uint32, err error) {
	i := bytes.LastIndex(data, []byte("\nchecksum "))
	if i < 0 || !bytes.HasSuffix(data, []byte("\n")) {
		return nil, 0, fmt.Errorf("%w: no checksum line", ErrMetaCorrupt)
	}
	hex := string(bytes.TrimSpace(data[i+len("\nchecksum "):]))
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || len(hex) != 8 {
		return nil, 0, fmt.Errorf("%w: bad checksum %q", ErrMetaCorrupt, hex)
	}
	return data[:i+1], uint32(v), nil
}

func (m *Meta) decodeFields(f map[string]string) error {
	var err error
	if m.Format.Algorithm, err = signature.ParseAlgorithm(f["signature"]); err != nil {
		return fmt.Errorf("%w: %w", ErrLayout, err)
	}
	if m.Format.Mode, err = signature.ParseMode(f["normalize"]); err != nil {
		return fmt.Errorf("%w: %w", ErrLayout, err)
	}
	m.Layout, m.BitOrder = f["layout"], f["bit-order"]
	m.Shards, _ = strconv.Atoi(f["shards"])
	m.ShardLen, _ = strconv.ParseInt(f["shard-bytes"], 10, 64)
	switch {
	case m.Layout != LayoutBitmap:
		return fmt.Errorf("%w: layout %q (this build knows %q)", ErrLayout, m.Layout, LayoutBitmap)
	case m.BitOrder != BitOrder:
		return fmt.Errorf("%w: bit order %q", ErrLayout, m.BitOrder)
	case m.Shards != Shards || m.ShardLen != ShardBytes:
		return fmt.Errorf("%w: %d shards of %d bytes (want %d of %d)", ErrLayout, m.Shards, m.ShardLen, Shards, ShardBytes)
	}
	if m.Created, err = time.Parse(time.RFC3339, f["created"]); err != nil {
		return fmt.Errorf("%w: created: %v", ErrMetaCorrupt, err)
	}
	return nil
}

func readMeta(dir string) (Meta, error) {
	path := filepath.Join(dir, MetaName)
	var m Meta
	f, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return m, fmt.Errorf("shardfile: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return m, fmt.Errorf("shardfile: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return m, fmt.Errorf("shardfile: %s: %w: mode %v (the metadata must be a regular file inside the state directory; links are not followed)",
			path, ErrNotRegular, fi.Mode())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMetaBytes+1))
	if err != nil {
		return m, fmt.Errorf("shardfile: read %s: %w", path, err)
	}
	if len(data) > maxMetaBytes {
		return m, fmt.Errorf("shardfile: %s: %w: over %d bytes is too large", path, ErrMetaCorrupt, maxMetaBytes)
	}
	if err := m.UnmarshalText(data); err != nil {
		return m, fmt.Errorf("shardfile: %s: %w", path, err)
	}
	return m, nil
}

// maxMetaBytes is the largest metadata file read; a real one is ~200 bytes.
const maxMetaBytes = 4096

// writeMeta writes the metadata file atomically: a temporary file, fsync,
// rename, fsync of the directory.
func writeMeta(dir string, dirf *os.File, m Meta) (err error) {
	data, _ := m.MarshalText()
	tmp, err := createTemp(dir, "."+MetaName+".tmp-")
	if err != nil {
		return fmt.Errorf("shardfile: create metadata: %w", noSpace(err))
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, MetaName))
	}
	if err == nil {
		err = dirf.Sync()
	}
	if err != nil {
		return fmt.Errorf("shardfile: write %s: %w", filepath.Join(dir, MetaName), noSpace(err))
	}
	return nil
}

// createTemp creates a new file prefix+random in dir, mode 0666 less the
// umask like the shards (os.CreateTemp would make it 0600).
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%s%08x", prefix, rand.Uint32())),
			os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

func noSpace(err error) error {
	if isNoSpace(err) && !errors.Is(err, ErrNoSpace) {
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

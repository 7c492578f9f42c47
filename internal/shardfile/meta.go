package shardfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/urldedupd/urldedupd/internal/format"
)

// MetaName is the metadata file's name inside the state directory.
const MetaName = "urldedupd.meta"

func readMeta(dir string) (format.Meta, error) {
	path := filepath.Join(dir, MetaName)
	var m format.Meta
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
	data, err := io.ReadAll(io.LimitReader(f, format.MaxMetaBytes+1))
	if err != nil {
		return m, fmt.Errorf("shardfile: read %s: %w", path, err)
	}
	if len(data) > format.MaxMetaBytes {
		return m, fmt.Errorf("shardfile: %s: %w: over %d bytes is too large", path, format.ErrCorrupt, format.MaxMetaBytes)
	}
	if err := m.UnmarshalText(data); err != nil {
		return m, fmt.Errorf("shardfile: %s: %w", path, err)
	}
	return m, nil
}

// writeMeta writes the metadata file atomically: a temporary file, fsync,
// rename, fsync of the directory.
func writeMeta(dir string, dirf *os.File, m format.Meta) (err error) {
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

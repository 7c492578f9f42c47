//go:build !linux

package shardfile

import (
	"errors"
	"os"
	"time"
)

// On other systems the state cannot be shared safely between processes.
func flock(f *os.File, exclusive bool, timeout time.Duration) error { return errors.ErrUnsupported }

var syncMap = func(b []byte) error { return errors.ErrUnsupported }

func isNoSpace(err error) bool { return false }

func populate(b []byte) {}

func writesBack(f *os.File) bool { return true }

func allocatedBytes(fi os.FileInfo) int64 { return fi.Size() }

func allocate(f *os.File, size int64) error { return errors.ErrUnsupported }

func isUnsupported(err error) bool { return errors.Is(err, errors.ErrUnsupported) }

func isBadAddress(err error) bool { return false }

func openNoFollow(path string, flag int) (*os.File, error) { return nil, errors.ErrUnsupported }

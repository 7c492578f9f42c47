//go:build !linux

package bloomlayout

import (
	"errors"
	"os"
)

type fileLock struct{ f *os.File }

func openLock(path string, readOnly bool) (*fileLock, error) {
	return nil, errors.ErrUnsupported
}

func (l *fileLock) Lock() error   { return errors.ErrUnsupported }
func (l *fileLock) Unlock() error { return errors.ErrUnsupported }
func (l *fileLock) Close() error  { return errors.ErrUnsupported }

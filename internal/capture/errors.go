package capture

import (
	"errors"

	"github.com/urldedupd/urldedupd/internal/capture/source"
)

// The errors of the sources (package source), under the names callers
// use: the same values, for errors.Is.
var (
	ErrFormat        = source.ErrFormat
	ErrTruncated     = source.ErrTruncated
	ErrCorrupt       = source.ErrCorrupt
	ErrIsDirectory   = source.ErrIsDirectory
	ErrStdinTwice    = source.ErrStdinTwice
	ErrInterfaceGone = source.ErrInterfaceGone
	ErrNoPacket      = source.ErrNoPacket
)

var (
	// ErrNothingDecoded is returned by replay for a capture file in which
	// no frame could be decoded (a link type or encapsulation this package
	// does not read, or no frames at all).
	ErrNothingDecoded = errors.New("no frame could be decoded")
	// ErrStopped is returned by Engine.Run after Engine.Stop.
	ErrStopped = errors.New("capture: stopped")
	// ErrLinkType is returned for a link layer this package cannot decode.
	ErrLinkType = errors.New("unsupported link type")

	// ErrProtos is returned by ParseProtos for a name that is not a
	// protocol: http, tls, quic or h2c.
	ErrProtos = errors.New("unknown protocol")
)

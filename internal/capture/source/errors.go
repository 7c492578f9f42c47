package source

import "errors"

var (
	// ErrFormat is returned for a file that is neither pcap nor pcapng
	// (plain or gzip-compressed).
	ErrFormat = errors.New("not a pcap or pcapng file")
	// ErrTruncated is returned when a capture file ends inside a packet or
	// block; everything before it has been processed.
	ErrTruncated = errors.New("capture file truncated")
	// ErrCorrupt is returned for a capture file whose framing is broken.
	ErrCorrupt = errors.New("capture file corrupt")
	// ErrIsDirectory is returned by OpenFiles for a path that is a
	// directory.
	ErrIsDirectory = errors.New("is a directory, not a capture file")

	// ErrStdinTwice is returned by OpenFiles when standard input ("-")
	// is given more than once: it can be read once.
	ErrStdinTwice = errors.New("standard input (-) given twice: it can be read once")

	// ErrPermission is returned when the process may not open a packet
	// socket: it needs CAP_NET_RAW (root has it).
	ErrPermission = errors.New("capturing needs CAP_NET_RAW")
	// ErrInterfaceGone is returned by a live Source whose interface was
	// deleted (or replaced by another of the same name).
	ErrInterfaceGone = errors.New("interface is gone")
	// ErrNoPacket is returned by a live Source's Next when no frame came
	// within its poll timeout; it is not an error to stop on.
	ErrNoPacket = errors.New("no packet yet")
)

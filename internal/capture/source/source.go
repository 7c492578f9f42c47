package source

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"os"
)

// Packet is one captured frame. Data aliases the source's buffer: it is
// valid until the next call to Next.
type Packet struct {
	Data []byte
	Info gopacket.CaptureInfo
	Link layers.LinkType
}

// Source yields captured frames.
type Source interface {
	// Next reads the next frame into p. It returns io.EOF after the last.
	Next(p *Packet) error
	// Drops returns the frames the kernel dropped, for live sources.
	Drops() uint64
	Close() error
}

// FanoutID returns a fanout group ID (LiveOptions.Fanout) for this
// process's capture of an interface: distinct between processes (the
// PID's low 16 bits, never 0), so two captures do not join each other's
// group.
func FanoutID() uint16 {
	if id := uint16(os.Getpid()); id != 0 {
		return id
	}
	return 1
}

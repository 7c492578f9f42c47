package source

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
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

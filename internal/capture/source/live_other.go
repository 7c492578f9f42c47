//go:build !linux

package source

import "errors"

// LiveOptions configure a live capture.
type LiveOptions struct {
	BPF       string
	RingBytes int
	Fanout    uint16
}

// LiveSource is only available on Linux.
type LiveSource struct{}

// OpenLive returns errors.ErrUnsupported outside Linux.
func OpenLive(iface string, opts *LiveOptions) (*LiveSource, error) {
	return nil, errors.ErrUnsupported
}

func (s *LiveSource) Next(p *Packet) error { return errors.ErrUnsupported }
func (s *LiveSource) Drops() uint64        { return 0 }
func (s *LiveSource) Close() error         { return nil }

package source

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
)

// LiveOptions configure a live capture.
type LiveOptions struct {
	// BPF is a filter expression in tcpdump's syntax, compiled by
	// `tcpdump -ddd` (libpcap's compiler) and attached to the socket.
	BPF string
	// RingBytes is the size of the memory-mapped receive ring; zero means
	// 64 MiB.
	RingBytes int
	// Fanout, when not zero, joins the socket to the AF_PACKET fanout
	// group of that ID on the interface (PACKET_FANOUT), in flow-hash mode
	// with defragmentation: the kernel spreads the interface's frames over
	// the group's sockets by the hash of their flow, both directions of a
	// connection and every fragment of a datagram to one socket. The
	// workers of one capture share an ID; another capture needs another.
	Fanout uint16
}

// LiveSource captures from a network interface through AF_PACKET with a
// memory-mapped TPACKET_V3 ring (ring_linux.go): no copy from the kernel
// (but for a frame whose VLAN tag the kernel stripped: it is put back),
// and the kernel's drop count is read from the socket.
type LiveSource struct {
	r       *ring
	iface   string
	index   int
	link    layers.LinkType
	checked time.Time // when the interface was last seen to exist
}

const (
	liveBlockSize = 1 << 20
	liveFrameSize = 1 << 16
)

// OpenLive opens iface for capture. It needs CAP_NET_RAW.
func OpenLive(iface string, opts *LiveOptions) (*LiveSource, error) {
	if opts == nil {
		opts = &LiveOptions{}
	}
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("capture: interface %q: %w", iface, err)
	}
	// Ethernet, and loopback with its all-zero Ethernet header; interfaces
	// without a MAC address (tun, WireGuard) carry bare IP packets.
	link := layers.LinkTypeEthernet
	if ifi.Flags&net.FlagLoopback == 0 && len(ifi.HardwareAddr) != 6 {
		link = layers.LinkTypeRaw
	}
	ring := opts.RingBytes
	if ring <= 0 {
		ring = 64 << 20
	}
	var prog []bpf.RawInstruction
	if opts.BPF != "" {
		if prog, err = compileBPF(opts.BPF, link); err != nil {
			return nil, fmt.Errorf("capture: filter %q: %w", opts.BPF, err)
		}
	}
	r, err := openRing(ifi.Index, link == layers.LinkTypeEthernet, liveBlockSize, max(ring/liveBlockSize, 2), liveFrameSize, prog,
		100*time.Millisecond, 10*time.Millisecond, opts.Fanout)
	if err != nil {
		if len(prog) > 0 {
			return nil, fmt.Errorf("capture: open %s with filter %q: %w", iface, opts.BPF, err)
		}
		return nil, fmt.Errorf("capture: open %s: %w", iface, err)
	}
	return &LiveSource{r: r, iface: iface, index: ifi.Index, link: link, checked: time.Now()}, nil
}

// Next reads the next frame, or returns ErrNoPacket when none came within
// the poll timeout (100 ms), so the caller can look at its context.
func (s *LiveSource) Next(p *Packet) error {
	ok, err := s.r.next(p)
	switch {
	case err != nil:
		return fmt.Errorf("capture: %s: %w", s.iface, err)
	case !ok:
		// A socket bound to a deleted interface just goes quiet: look,
		// at most once a second, whether it is still there.
		if time.Since(s.checked) >= time.Second {
			if ifi, err := net.InterfaceByIndex(s.index); err != nil || ifi.Name != s.iface {
				return fmt.Errorf("capture: %s: %w", s.iface, ErrInterfaceGone)
			}
			s.checked = time.Now()
		}
		return ErrNoPacket
	}
	p.Link = s.link
	return nil
}

// Drops returns the frames the kernel dropped since the capture started
// (the ring was full).
func (s *LiveSource) Drops() uint64 { return s.r.dropped() }

// Close closes the socket.
func (s *LiveSource) Close() error {
	s.r.close()
	return nil
}

// compileBPF compiles a tcpdump filter expression for the link type with
// libpcap's compiler, through `tcpdump -ddd`, which prints the program as
// decimal numbers: a count, then "code jt jf k" per instruction.
func compileBPF(expr string, link layers.LinkType) ([]bpf.RawInstruction, error) {
	dlt := "EN10MB"
	if link == layers.LinkTypeRaw {
		dlt = "RAW"
	}
	out, err := exec.Command("tcpdump", "-y", dlt, "-ddd", expr).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s", strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("tcpdump compiles the filter: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	n, err := strconv.Atoi(lines[0])
	if err != nil || n != len(lines)-1 {
		return nil, fmt.Errorf("unexpected tcpdump -ddd output %q", lines[0])
	}
	prog := make([]bpf.RawInstruction, 0, n)
	for _, l := range lines[1:] {
		var ins bpf.RawInstruction
		if _, err := fmt.Sscan(l, &ins.Op, &ins.Jt, &ins.Jf, &ins.K); err != nil {
			return nil, fmt.Errorf("tcpdump -ddd line %q: %w", l, err)
		}
		prog = append(prog, ins)
	}
	return prog, nil
}

package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// ring is an AF_PACKET socket with a TPACKET_V3 receive ring, read in
// place: the kernel fills blocks of frames, each block is handed back
// when its frames have been read. It is read by hand (not with gopacket's
// afpacket) to restore the 802.1Q tag the kernel strips from received
// frames and reports in the frame's header, without allocating: afpacket
// appends it to CaptureInfo.AncillaryData, an allocation per tagged frame,
// and keeps only its VLAN ID.
type ring struct {
	fd        int
	mem       []byte
	blockSize int
	blocks    int
	block     int    // the block being read
	left      uint32 // frames left in it
	off       int    // of the next frame in it
	held      bool   // the block is ours until the next read
	tagged    []byte // a frame with its tag put back: the frame size and the tag
	pfd       [1]unix.PollFd
	drops     uint64 // dropped frames counted so far (reading resets the kernel's)
	timeout   int    // poll timeout, ms
	ether     bool   // frames have an Ethernet header: a stripped tag can be put back
}

// vlanHeaderLen is the bytes of an 802.1Q tag: TPID and TCI.
const vlanHeaderLen = 4

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openRing opens a ring of blocks blocks of blockSize bytes on the
// interface index, with the BPF program prog (none when empty) attached
// before any frame is taken in.
func openRing(index int, ether bool, blockSize, blocks, frameSize int, prog []bpf.RawInstruction, pollTimeout, blockTimeout time.Duration, fanout uint16) (*ring, error) {
	// Protocol 0: the socket takes in nothing until it is bound, after the
	// filter and the ring are in place.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("socket: %w: %w", ErrPermission, err)
		}
		return nil, fmt.Errorf("socket: %w", err)
	}
	r := &ring{fd: fd, ether: ether, blockSize: blockSize, blocks: blocks, timeout: int(pollTimeout / time.Millisecond)}
	fail := func(what string, err error) (*ring, error) {
		r.close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(prog) > 0 {
		ins := make([]unix.SockFilter, len(prog))
		for i, p := range prog {
			ins[i] = unix.SockFilter{Code: p.Op, Jt: p.Jt, Jf: p.Jf, K: p.K}
		}
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(ins)), Filter: &ins[0]}); err != nil {
			return fail("attach filter", err)
		}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3); err != nil {
		return fail("TPACKET_V3", err)
	}
	req := unix.TpacketReq3{Block_size: uint32(blockSize), Block_nr: uint32(blocks), Frame_size: uint32(frameSize),
		Frame_nr: uint32(blockSize / frameSize * blocks), Retire_blk_tov: uint32(blockTimeout / time.Millisecond)}
	if err := unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return fail("receive ring", err)
	}
	if r.mem, err = unix.Mmap(fd, 0, blockSize*blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fail("mmap", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: index}); err != nil {
		return fail("bind", err)
	}
	if fanout != 0 {
		arg := int(fanout) | (unix.PACKET_FANOUT_HASH|unix.PACKET_FANOUT_FLAG_DEFRAG)<<16
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_FANOUT, arg); err != nil {
			return fail(fmt.Sprintf("join fanout group %d", fanout), err)
		}
	}
	r.tagged = make([]byte, frameSize+vlanHeaderLen)
	r.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN | unix.POLLERR}
	return r, nil
}

// blockHdr is the header of block i.
func (r *ring) blockHdr(i int) *unix.TpacketHdrV1 {
	return (*unix.TpacketHdrV1)(unsafe.Pointer(&r.mem[i*r.blockSize+int(unsafe.Offsetof(unix.TpacketBlockDesc{}.Hdr))]))
}

// next returns the next frame, or ok false when none came within the poll
// timeout. The data stays valid until the next call. A frame whose 802.1Q
// tag the kernel took off (TP_STATUS_VLAN_VALID) is returned with it put
// back behind the MAC addresses, copied into r.tagged, its TPID that the
// kernel gives (802.1ad, or 802.1Q when it gives none) and its whole TCI.
func (r *ring) next(p *Packet) (ok bool, err error) {
	for r.left == 0 {
		if r.held { // hand the block read back to the kernel
			atomic.StoreUint32(&r.blockHdr(r.block).Block_status, unix.TP_STATUS_KERNEL)
			r.held = false
			r.block = (r.block + 1) % r.blocks
		}
		h := r.blockHdr(r.block)
		if atomic.LoadUint32(&h.Block_status)&unix.TP_STATUS_USER == 0 {
			n, err := unix.Poll(r.pfd[:], r.timeout)
			if err != nil && err != unix.EINTR {
				return false, fmt.Errorf("poll: %w", err)
			}
			if n <= 0 || atomic.LoadUint32(&h.Block_status)&unix.TP_STATUS_USER == 0 {
				return false, nil
			}
		}
		r.held, r.left, r.off = true, h.Num_pkts, int(h.Offset_to_first_pkt)
	}
	base := r.block * r.blockSize
	f := (*unix.Tpacket3Hdr)(unsafe.Pointer(&r.mem[base+r.off]))
	r.left--
	r.off += int(f.Next_offset)
	start := base + r.off - int(f.Next_offset) + int(f.Mac)
	data := r.mem[start : start+int(f.Snaplen) : start+int(f.Snaplen)]
	p.Info.Timestamp = time.Unix(int64(f.Sec), int64(f.Nsec))
	p.Info.CaptureLength, p.Info.Length = len(data), int(f.Len)
	if r.ether && f.Status&unix.TP_STATUS_VLAN_VALID != 0 && len(data) >= 12 && len(data)+vlanHeaderLen <= len(r.tagged) {
		tpid := uint16(unix.ETH_P_8021Q)
		if f.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 && f.Hv1.Vlan_tpid != 0 {
			tpid = f.Hv1.Vlan_tpid
		}
		t := r.tagged[:len(data)+vlanHeaderLen]
		copy(t, data[:12])
		binary.BigEndian.PutUint16(t[12:], tpid)
		binary.BigEndian.PutUint16(t[14:], uint16(f.Hv1.Vlan_tci))
		copy(t[16:], data[12:])
		data = t
		p.Info.CaptureLength += vlanHeaderLen
		p.Info.Length += vlanHeaderLen
	}
	p.Data = data
	return true, nil
}

// dropped returns the frames the kernel dropped since the ring opened.
func (r *ring) dropped() uint64 {
	if st, err := unix.GetsockoptTpacketStatsV3(r.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
		r.drops += uint64(st.Drops) // reading resets the kernel's count
	}
	return r.drops
}

func (r *ring) close() {
	if r.mem != nil {
		unix.Munmap(r.mem)
		r.mem = nil
	}
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

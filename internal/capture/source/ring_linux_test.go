package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urldedupd/urldedupd/internal/racetest"
)

// The live ring puts back the VLAN tag the kernel strips, with its TPID and
// whole TCI, and allocates nothing per frame doing it. Tagged frames
// (802.1Q with priority bits, 802.1ad) are sent on loopback with a raw
// socket; the kernel strips the tag from the received copy (the sent copy
// keeps it in the data). Frames are read with no allocation, and each
// received frame is the sent one, byte for byte.
func TestLiveRingVLANTag(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("AF_PACKET needs root")
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	src, err := OpenLive("lo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	// A marker in the source MAC address tells this test's frames from
	// anything else on loopback.
	mark := []byte{0x02, 0x75, 0x64, byte(os.Getpid() >> 8), byte(os.Getpid()), 0x01}
	frame := func(tpid, tci uint16, i int) []byte {
		f := append(append(make([]byte, 6), mark...), 0, 0, 0, 0, 0x08, 0x00)
		binary.BigEndian.PutUint16(f[12:], tpid)
		binary.BigEndian.PutUint16(f[14:], tci)
		return append(f, bytes.Repeat([]byte{byte(i)}, 46)...) // not IP: other
	}
	const n = 300
	sent := map[string]bool{}
	for i := range n {
		f := frame(0x8100, 5<<13|10, i)
		if i%2 == 1 {
			f = frame(0x88a8, 20, i)
		}
		sent[string(f)] = true
		if err := unix.Sendto(fd, f, 0, &unix.SockaddrLinklayer{Ifindex: lo.Index, Halen: 6}); err != nil {
			t.Fatal(err)
		}
	}
	var p Packet
	seen := 0
	read := func() {
		for {
			err := src.Next(&p)
			if errors.Is(err, ErrNoPacket) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Data) >= 12 && bytes.Equal(p.Data[6:12], mark) {
				if !sent[string(p.Data)] || p.Info.CaptureLength != len(p.Data) || p.Info.Length != len(p.Data) {
					t.Fatalf("read % x (lengths %d %d), not a frame sent", p.Data, p.Info.CaptureLength, p.Info.Length)
				}
				seen++
				return
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	if a := testing.AllocsPerRun(2*n-1, read); a > 0 && !racetest.Enabled {
		t.Errorf("%.2f allocations a frame read", a)
	}
	for seen < 2*n && time.Now().Before(deadline) {
		read()
	}
	if seen != 2*n { // each frame sent is read twice: outgoing, and received without its tag
		t.Fatalf("read %d of the %d frames", seen, 2*n)
	}
}

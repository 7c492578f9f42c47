package decode

import (
	"strings"
	"testing"
	"time"
)

// fragKeyTest is a datagram key for the defragmenter's own tests.
func fragKeyTest(id uint32, v6 bool) fragKey { return fragKey{id: id, v6: v6, proto: 6} }

type fragPiece struct {
	off  int
	more bool
	data string
}

func TestDefragmenter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	payload := strings.Repeat("abcdefgh", 4) + "xyz" // 35 bytes
	p := func(off, n int, more bool) fragPiece { return fragPiece{off, more, payload[off : off+n]} }
	tests := []struct {
		name   string
		pieces []fragPiece
		want   string // the datagram, "" if none
		stats  FragStats
	}{
		{"in order", []fragPiece{p(0, 16, true), p(16, 16, true), p(32, 3, false)}, payload, FragStats{Reassembled: 1}},
		{"reversed", []fragPiece{p(32, 3, false), p(16, 16, true), p(0, 16, true)}, payload, FragStats{Reassembled: 1}},
		{"duplicate", []fragPiece{p(0, 16, true), p(0, 16, true), p(32, 3, false), p(32, 3, false), p(16, 16, true)}, payload, FragStats{Reassembled: 1}},
		{"overlap: first copy wins", []fragPiece{p(0, 16, true), {8, true, "XXXXXXXXYYYYYYYY"}, p(16, 19, false)},
			payload[:16] + "YYYYYYYY" + payload[24:], FragStats{Reassembled: 1}},
		{"one fragment with offset 0 and no more", []fragPiece{p(0, 35, false)}, payload, FragStats{Reassembled: 1}},
		{"missing last", []fragPiece{p(0, 16, true), p(16, 16, true)}, "", FragStats{}},
		{"two different ends", []fragPiece{p(32, 3, false), {16, false, "abc"}}, "", FragStats{Invalid: 1}},
		{"data past the end", []fragPiece{p(16, 8, false), p(16, 16, true)}, "", FragStats{Invalid: 1}},
		{"not a multiple of 8 before the end", []fragPiece{{0, true, "abc"}}, "", FragStats{Invalid: 1}},
		{"over MaxDatagram", []fragPiece{{MaxDatagram - 7, false, "abcdefgh"}}, "", FragStats{Invalid: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newDefragmenter(DefragOptions{})
			var got []byte
			for i, pc := range tc.pieces {
				b, proto, ok := f.add(t0, fragKeyTest(1, false), pc.off, pc.more, 6, []byte(pc.data))
				if ok {
					if i != len(tc.pieces)-1 || proto != 6 {
						t.Fatalf("datagram complete at piece %d of %d, proto %d", i, len(tc.pieces), proto)
					}
					got = append([]byte(nil), b...)
				}
			}
			if string(got) != tc.want || f.stats != tc.stats {
				t.Fatalf("got %q %+v, want %q %+v", got, f.stats, tc.want, tc.stats)
			}
		})
	}
}

func TestDefragmenterCaps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	piece := make([]byte, 1024)
	t.Run("timeouts in packet time, IPv4 30 s, IPv6 60 s", func(t *testing.T) {
		f := newDefragmenter(DefragOptions{})
		f.add(t0, fragKeyTest(1, false), 0, true, 0, piece)
		f.add(t0, fragKeyTest(2, true), 0, true, 0, piece)
		f.add(t0.Add(30*time.Second), fragKeyTest(3, false), 0, true, 0, piece)
		if f.inProgress() != 3 || f.stats.Timeouts != 0 {
			t.Fatalf("at 30 s: %d in progress, %+v", f.inProgress(), f.stats)
		}
		f.add(t0.Add(31*time.Second), fragKeyTest(3, false), 1024, true, 0, piece)
		if f.inProgress() != 2 || f.stats.Timeouts != 1 {
			t.Fatalf("at 31 s: %d in progress, %+v", f.inProgress(), f.stats)
		}
		// the late last fragment of datagram 1 starts a new datagram that never completes
		if _, _, ok := f.add(t0.Add(61*time.Second), fragKeyTest(1, false), 1024, false, 0, piece); ok || f.stats.Timeouts != 3 || f.inProgress() != 1 {
			t.Fatalf("at 61 s: %d in progress, %+v", f.inProgress(), f.stats)
		}
	})
	t.Run("MaxDatagrams: the oldest dropped", func(t *testing.T) {
		f := newDefragmenter(DefragOptions{MaxDatagrams: 3})
		for id := range uint32(5) {
			f.add(t0, fragKeyTest(id, false), 0, true, 0, piece)
		}
		if f.inProgress() != 3 || f.stats.Evicted != 2 {
			t.Fatalf("%d in progress, %+v", f.inProgress(), f.stats)
		}
		if _, _, ok := f.add(t0, fragKeyTest(0, false), 1024, false, 0, piece); ok { // 0 was dropped
			t.Fatal("datagram 0 completed after it was dropped")
		}
		if _, _, ok := f.add(t0, fragKeyTest(4, false), 1024, false, 0, piece); !ok {
			t.Fatalf("datagram 4 not completed: %+v", f.stats)
		}
	})
	t.Run("MaxBytes: the oldest dropped", func(t *testing.T) {
		f := newDefragmenter(DefragOptions{MaxBytes: 3072})
		for id := range uint32(3) {
			f.add(t0, fragKeyTest(id, false), 0, true, 0, piece[:1024])
		}
		if f.bytes > 3072 || f.stats.Evicted != 0 || f.inProgress() != 3 {
			t.Fatalf("%d bytes, %d in progress, %+v", f.bytes, f.inProgress(), f.stats)
		}
		f.add(t0, fragKeyTest(1, false), 1024, true, 0, piece) // grows to 2048: datagram 0 goes
		if f.bytes > 3072 || f.stats.Evicted != 1 || f.inProgress() != 2 {
			t.Fatalf("%d bytes, %d in progress, %+v", f.bytes, f.inProgress(), f.stats)
		}
		f.add(t0, fragKeyTest(2, false), 0, true, 0, make([]byte, 8192)) // larger than the cap alone
		if f.bytes > 3072 || f.stats.Evicted != 3 || f.inProgress() != 0 {
			t.Fatalf("%d bytes, %d in progress, %+v", f.bytes, f.inProgress(), f.stats)
		}
	})
	t.Run("buffers reused", func(t *testing.T) {
		f := newDefragmenter(DefragOptions{})
		id := uint32(0)
		whole := func() {
			id++
			f.add(t0, fragKeyTest(id, false), 0, true, 0, piece)
			if _, _, ok := f.add(t0, fragKeyTest(id, false), 1024, false, 0, piece); !ok {
				t.Fatal("not reassembled")
			}
		}
		whole()
		whole()
		if n := testing.AllocsPerRun(100, whole); n > 0 {
			t.Fatalf("%v allocations per datagram with buffers to reuse", n)
		}
	})
}

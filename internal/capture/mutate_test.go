package capture

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/racetest"
)

// Mutants of every committed capture (as pcap, pcapng and gzip): bit flips,
// byte sets, truncations, and TCP sequence numbers rewritten in place
// (2^31 and 2^32 - 1 away, 0, 2^32 - 1, random), seeded, within a time
// budget. Each is run through OpenFiles and an Engine: none may panic
// (Stats.Panics must stay 0: the engine's recovery must not hide one) or
// hang, and each either ends cleanly or with an error that is one of the
// package's sentinels.
//
// The work is counted, not timed: 2,000 mutants (500 under the race
// detector), about 2 s on 2 quiet cores and 30 s at load 8. A loop that
// crawls is caught by a cap 20 times the loaded figure, a mutant that
// hangs by its own 60 s limit: neither depends on the machine's speed.
// Every kind of mutant must have been made: the sequence is seeded, so the
// first 500 always hold them all.
func TestMutatedCaptures(t *testing.T) {
	const limit = 10 * time.Minute
	minMutants := 2000
	if racetest.Enabled {
		minMutants = 500
	}
	paths, _ := filepath.Glob("testdata/captures/*.pcap*")
	if len(paths) < 2 {
		t.Fatalf("committed captures: %q", paths)
	}
	tmp := t.TempDir()
	type base struct {
		name string
		data []byte
		seqs []int // offsets of TCP sequence numbers
		gz   bool  // mutate, then compress
	}
	var bases []base
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seqs := pcapSeqOffsets(t, data)
		ng := filepath.Join(tmp, filepath.Base(p)+"ng")
		if out, err := exec.Command("editcap", "-F", "pcapng", p, ng).CombinedOutput(); err != nil {
			t.Fatalf("editcap: %v %s", err, out)
		}
		ngData, err := os.ReadFile(ng)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, base{p, data, seqs, false}, base{p + " (pcapng)", ngData, nil, false}, base{p + " (gzip)", data, seqs, true})
	}
	sentinels := []error{ErrCorrupt, ErrTruncated, ErrFormat, ErrLinkType}
	rng := rand.New(rand.NewPCG(9, 9))
	in := filepath.Join(tmp, "mutant")
	start := time.Now()
	var n, failed, requests int
	kinds := map[string]int{}
	for n < minMutants {
		if time.Since(start) > limit {
			t.Fatalf("only %d of %d mutants within %v: the loop crawls", n, minMutants, limit)
		}
		b := bases[n%len(bases)]
		m, kind := mutate(rng, b.data, b.seqs)
		if b.gz {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(m)
			zw.Close()
			m = z.Bytes()
			if rng.IntN(4) == 0 { // damage the compressed stream too
				m, _ = mutate(rng, m, nil)
				kind += "+gzip"
			}
		}
		kinds[kind]++
		n++
		if err := os.WriteFile(in, m, 0o644); err != nil {
			t.Fatal(err)
		}
		type result struct {
			st   Stats
			reqs int
			err  error
		}
		done := make(chan result, 1)
		go func() {
			src, err := OpenFiles(in)
			if err != nil {
				done <- result{err: err}
				return
			}
			defer src.Close()
			reqs := 0
			e := NewEngine(nil, func(*Request) { reqs++ })
			e.OnPanic = func(p *PanicError) { t.Errorf("%s mutant %d (%s): %v\n%s", b.name, n, kind, p, p.Stack) }
			err = e.Run(context.Background(), src)
			done <- result{e.Stats(), reqs, err}
		}()
		var r result
		select {
		case r = <-done:
		case <-time.After(60 * time.Second):
			os.WriteFile(filepath.Join(os.TempDir(), "hung-mutant.pcap"), m, 0o644)
			t.Fatalf("%s mutant %d (%s) still running after 60 s; kept as %s", b.name, n, kind, filepath.Join(os.TempDir(), "hung-mutant.pcap"))
		}
		requests += r.reqs
		if r.st.Panics != 0 {
			t.Fatalf("%s mutant %d (%s): %d panics recovered", b.name, n, kind, r.st.Panics)
		}
		if r.err != nil {
			failed++
			ok := false
			for _, s := range sentinels {
				ok = ok || errors.Is(r.err, s)
			}
			if !ok || !strings.Contains(r.err.Error(), in) {
				t.Fatalf("%s mutant %d (%s): error %q is none of %v or does not name the file", b.name, n, kind, r.err, sentinels)
			}
		}
	}
	t.Logf("%d mutants in %v (%v): %d ended with an error, %d requests found", n, time.Since(start).Round(time.Millisecond), kinds, failed, requests)
	for _, k := range []string{"bit flips", "byte sets", "truncation", "sequence numbers", "cut",
		"bit flips+gzip", "byte sets+gzip", "truncation+gzip", "sequence numbers+gzip"} {
		if kinds[k] == 0 {
			t.Errorf("no %q mutant among %d: %v", k, n, kinds)
		}
	}
}

// mutate returns a damaged copy of data and what was done to it.
func mutate(rng *rand.Rand, data []byte, seqs []int) ([]byte, string) {
	m := append([]byte(nil), data...)
	switch k := rng.IntN(10); {
	case k < 3:
		for range 1 + rng.IntN(8) {
			i := rng.IntN(len(m))
			m[i] ^= 1 << rng.IntN(8)
		}
		return m, "bit flips"
	case k < 5:
		for range 1 + rng.IntN(4) {
			m[rng.IntN(len(m))] = []byte{0, 0xff, 0x7f, 0x80, byte(rng.Uint32())}[rng.IntN(5)]
		}
		return m, "byte sets"
	case k < 7:
		return m[:rng.IntN(len(m))], "truncation"
	case len(seqs) > 0:
		for range 1 + rng.IntN(3) {
			off := seqs[rng.IntN(len(seqs))]
			seq := binary.BigEndian.Uint32(m[off:])
			switch rng.IntN(5) {
			case 0:
				seq += 1 << 31
			case 1:
				seq += 1<<32 - 1
			case 2:
				seq = 0
			case 3:
				seq = 1<<32 - 1
			default:
				seq = rng.Uint32()
			}
			binary.BigEndian.PutUint32(m[off:], seq)
		}
		return m, "sequence numbers"
	default:
		i := rng.IntN(len(m))
		return append(m[:i:i], m[min(len(m), i+1+rng.IntN(64)):]...), "cut"
	}
}

// pcapSeqOffsets returns the offsets of the TCP sequence numbers in a
// little-endian pcap of Ethernet or SLL2 frames carrying IPv4 or IPv6.
func pcapSeqOffsets(t *testing.T, data []byte) []int {
	t.Helper()
	le := binary.LittleEndian
	if le.Uint32(data) != 0xa1b2c3d4 {
		t.Fatalf("not a little-endian microsecond pcap")
	}
	link := le.Uint32(data[20:])
	var offs []int
	for off := 24; off+16 <= len(data); {
		n := int(le.Uint32(data[off+8:]))
		f := data[off+16 : off+16+n]
		var ip int
		var etype uint16
		switch link {
		case 1: // Ethernet
			ip, etype = 14, binary.BigEndian.Uint16(f[12:])
		case 276: // SLL2
			ip, etype = 20, binary.BigEndian.Uint16(f[0:])
		default:
			t.Fatalf("link type %d", link)
		}
		if etype == 0x0800 && f[ip+9] == 17 && n >= ip+20+8+8+14+20 && f[ip+28] == 0x08 { // VXLAN: the inner frame's
			inner := ip + int(f[ip]&0xf)*4 + 8 + 8
			ip, etype = inner+14, binary.BigEndian.Uint16(f[inner+12:])
		}
		if etype == 0x0800 && f[ip+9] == 17 && n >= ip+20+8+40 && f[ip+28]>>4 == 6 { // Teredo: the inner IPv6 packet's
			ip, etype = ip+int(f[ip]&0xf)*4+8, 0x86dd
		}
		tcp := -1
		switch {
		case etype == 0x0800 && f[ip+9] == 6:
			tcp = ip + int(f[ip]&0xf)*4
		case etype == 0x86dd && f[ip+6] == 6:
			tcp = ip + 40
		}
		if tcp >= 0 && tcp+8 <= n {
			offs = append(offs, off+16+tcp+4)
		}
		off += 16 + n
	}
	if len(offs) < 30 {
		t.Fatalf("only %d TCP segments found", len(offs))
	}
	return offs
}

// Command quicbench writes a QUIC-heavy capture for scripts/bench-quic.sh:
// CONNS QUIC v1 connections, each a client's first two Initial datagrams
// carrying a real ClientHello of Go's crypto/tls QUIC client (its default
// key shares include X25519MLKEM768, so the ClientHello takes two
// Initials, as browsers' do), with its own DCID, SCID and client address,
// to one of HOSTS server names h000000.bench.example ... (the name patched
// in place in one of 16 ClientHellos made at start). Ethernet, IPv4, UDP
// port 443 from ephemeral ports; 10 µs apart.
//
//	quicbench -o quic.pcap -conns 100000 -hosts 20000
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/urldedupd/urldedupd/internal/quic"
)

const (
	namePattern = "h000000.bench.example"
	templates   = 16
	datagramLen = 1200 // a client pads its Initial datagrams to at least this (RFC 9000 §14.1)
)

func main() {
	out := flag.String("o", "quic.pcap", "capture to write")
	conns := flag.Int("conns", 100000, "QUIC connections")
	hosts := flag.Int("hosts", 20000, "distinct server names (at most 1,000,000)")
	flag.Parse()
	if err := run(*out, *conns, *hosts); err != nil {
		fmt.Fprintln(os.Stderr, "quicbench:", err)
		os.Exit(1)
	}
}

// clientHello returns the CRYPTO data crypto/tls's QUIC client sends at
// the Initial level: its ClientHello.
func clientHello() ([]byte, error) {
	q := tls.QUICClient(&tls.QUICConfig{TLSConfig: &tls.Config{ServerName: namePattern, NextProtos: []string{"h3"}, MinVersion: tls.VersionTLS13}})
	// Transport parameters as a client sends them: initial_max_data and
	// initial_max_streams_bidi; the content does not matter here.
	q.SetTransportParameters([]byte{0x04, 0x04, 0x80, 0x10, 0x00, 0x00, 0x08, 0x02, 0x40, 0x64})
	if err := q.Start(context.Background()); err != nil {
		return nil, err
	}
	defer q.Close()
	var hello []byte
	for {
		e := q.NextEvent()
		switch {
		case e.Kind == tls.QUICNoEvent:
			if len(hello) == 0 {
				return nil, errors.New("no ClientHello")
			}
			return hello, nil
		case e.Kind == tls.QUICWriteData && e.Level == tls.QUICEncryptionLevelInitial:
			hello = append(hello, e.Data...)
		}
	}
}

func run(path string, conns, hosts int) error {
	if hosts < 1 || hosts > 1000000 {
		return errors.New("-hosts: 1 to 1,000,000")
	}
	var hellos [templates][]byte
	var nameAt [templates]int
	for i := range hellos {
		h, err := clientHello()
		if err != nil {
			return err
		}
		hellos[i], nameAt[i] = h, bytes.Index(h, []byte(namePattern))
		if nameAt[i] < 0 {
			return errors.New("server name not found in the ClientHello")
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	// pcap header: microseconds, little-endian, Ethernet.
	hdr := make([]byte, 24)
	le := binary.LittleEndian
	le.PutUint32(hdr[0:], 0xa1b2c3d4)
	le.PutUint16(hdr[4:], 2)
	le.PutUint16(hdr[6:], 4)
	le.PutUint32(hdr[16:], 65535)
	le.PutUint32(hdr[20:], 1)
	w.Write(hdr)
	t := time.Unix(1_700_000_000, 0)
	var frame []byte
	for c := range conns {
		k := c % templates
		h := hellos[k]
		copy(h[nameAt[k]+1:], fmt.Sprintf("%06d", c%hosts))
		var ids [20]byte
		rand.Read(ids[:])
		dcid, scid := ids[:8], ids[8:16]
		client := [4]byte{10, ids[16], ids[17], ids[18]&0xfe | 1}
		server := [4]byte{192, 0, 2, byte(1 + c%hosts%250)}
		port := 49152 + binary.BigEndian.Uint16(ids[18:])%16384 // the ephemeral range
		// The ClientHello in two Initials: the first as full as a
		// 1,200-byte datagram allows, the rest (and padding) in the second.
		first := datagramLen - 64
		for pn, part := range [][2]int{{0, first}, {first, len(h)}} {
			frames := quic.AppendCryptoFrame(nil, uint64(part[0]), h[part[0]:min(part[1], len(h))])
			pkt := quic.SealClientInitial(quic.Version1, dcid, scid, uint32(pn), padded(frames, len(dcid)+len(scid)))
			frame = appendFrame(frame[:0], client, server, port, pkt)
			var rec [16]byte
			le.PutUint32(rec[0:], uint32(t.Unix()))
			le.PutUint32(rec[4:], uint32(t.Nanosecond()/1000))
			le.PutUint32(rec[8:], uint32(len(frame)))
			le.PutUint32(rec[12:], uint32(len(frame)))
			w.Write(rec[:])
			w.Write(frame)
			t = t.Add(10 * time.Microsecond)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// padded appends PADDING frames (zeros) so that the Initial packet, with
// its header and AEAD tag, makes a datagram of datagramLen bytes.
func padded(frames []byte, cids int) []byte {
	overhead := 1 + 4 + 2 + cids + 1 + 2 + 4 + 16 // first byte, version, CID lengths, CIDs, token length, Length, packet number, tag
	if n := datagramLen - overhead - len(frames); n > 0 {
		frames = append(frames, make([]byte, n)...)
	}
	return frames
}

// appendFrame appends an Ethernet frame of an IPv4 UDP datagram from
// client:port to server:443 (UDP checksum 0: none, as IPv4 allows).
func appendFrame(b []byte, client, server [4]byte, port uint16, payload []byte) []byte {
	b = append(b, 0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00)
	ip := len(b)
	total := 20 + 8 + len(payload)
	b = append(b, 0x45, 0, byte(total>>8), byte(total), 0, 0, 0x40, 0, 64, 17, 0, 0)
	b = append(b, client[:]...)
	b = append(b, server[:]...)
	var sum uint32
	for i := ip; i < ip+20; i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(b[ip+10:], ^uint16(sum))
	udp := 8 + len(payload)
	b = append(b, byte(port>>8), byte(port), 0x01, 0xbb, byte(udp>>8), byte(udp), 0, 0)
	return append(b, payload...)
}

package capture

import "github.com/urldedupd/urldedupd/internal/tlshello"

// MaxHello caps the bytes of a ClientHello collected from a TCP stream
// (the handshake message, its TLS record headers removed). A handshake
// that says it is longer is counted (TLSStats.TooLarge) and its stream
// skipped. The bytes held count against MaxFlowBuffer and MaxBuffer like
// any other.
const MaxHello = 64 << 10

// maxRecord is the longest TLS record fragment taken: 2^14 bytes of
// plaintext (RFC 8446 §5.1), with room for the expansion TLS 1.2 allows.
const maxRecord = 1<<14 + 2048

// tlsFeed collects the first handshake message of a client stream that
// starts with a TLS handshake record, across TCP segments and TLS records,
// and emits it when whole: a ClientHello for the assembler to parse. Then,
// or at the first thing that is not a ClientHello, the stream is skipped:
// nothing after the ClientHello is readable.
func (p *reqParser) tlsFeed(data []byte, emit func(*request)) {
	for len(data) > 0 && p.state == stTLS {
		if p.recLeft == 0 {
			k := copy(p.recHdr[p.recHdrN:], data)
			p.recHdrN += uint8(k)
			data = data[k:]
			if p.recHdrN < uint8(len(p.recHdr)) {
				return
			}
			p.recHdrN = 0
			n := int(p.recHdr[3])<<8 | int(p.recHdr[4])
			if p.recHdr[0] != 0x16 || p.recHdr[1] != 3 || n > maxRecord {
				if len(p.line) > 0 {
					p.tlsErrors++ // a ClientHello cut by a record that is not its own
				}
				p.tlsStop()
				return
			}
			p.recLeft = uint16(n)
			continue
		}
		k := min(len(data), int(p.recLeft))
		frag := data[:k]
		data = data[k:]
		p.recLeft -= uint16(k)
		p.tlsFragment(frag, emit)
	}
}

// tlsFragment takes the payload of a handshake record.
func (p *reqParser) tlsFragment(frag []byte, emit func(*request)) {
	if len(frag) == 0 {
		return
	}
	if len(p.line) == 0 {
		if frag[0] != tlshello.TypeClientHello {
			p.tlsStop() // a stream picked up after its start, or not TLS
			return
		}
		if n, ok := tlshello.HandshakeLen(frag); ok && len(frag) >= n && n <= MaxHello {
			p.tlsEmit(frag[:n], emit) // whole in one fragment: nothing copied
			return
		}
	}
	need := len(p.line) + len(frag)
	n, known := tlshello.HandshakeLen(p.line)
	if !known {
		if len(p.line) > 0 && need >= 4 {
			var hdr [4]byte
			copy(hdr[copy(hdr[:], p.line):], frag)
			n, known = tlshello.HandshakeLen(hdr[:])
		} else {
			n, known = tlshello.HandshakeLen(frag)
		}
	}
	if known && n > MaxHello {
		p.tlsTooLarge++
		p.tlsStop()
		return
	}
	size := need
	if known {
		size = n // the whole message: one buffer of the right size
	}
	if cap(p.line) < size {
		if !p.fits(p.line, size) {
			p.overflows++
			p.tlsStop()
			return
		}
		buf := make([]byte, len(p.line), size)
		copy(buf, p.line)
		p.line = buf
	}
	take := len(frag)
	if known {
		take = min(take, n-len(p.line))
	}
	p.line = append(p.line, frag[:take]...)
	if known && len(p.line) == n {
		p.tlsEmit(p.line, emit)
	}
}

// tlsEmit hands a whole handshake message to the assembler and ends the
// stream's parsing.
func (p *reqParser) tlsEmit(msg []byte, emit func(*request)) {
	p.r = request{hello: msg, destPort: p.destPort}
	emit(&p.r)
	p.r = request{}
	p.tlsStop()
}

// tlsStop skips the rest of the stream and releases the buffer.
func (p *reqParser) tlsStop() {
	p.state = stSkip
	p.line = nil
	p.recLeft, p.recHdrN = 0, 0
}

// collectTLS moves the parser's TLS counts into t.
func (p *reqParser) collectTLS(t *TLSStats) {
	t.Errors += uint64(p.tlsErrors)
	t.TooLarge += uint64(p.tlsTooLarge)
	p.tlsErrors, p.tlsTooLarge = 0, 0
}

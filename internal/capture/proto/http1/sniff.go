package http1

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strconv"
	"sync"

	"github.com/urldedupd/urldedupd/internal/capture/record"
	"github.com/urldedupd/urldedupd/internal/counter"
)

// StreamKind is what a client stream that is not HTTP was recognised as,
// by its first bytes. The set is small and fixed: Stats.NonHTTP
// counts the streams of each kind.
type StreamKind uint8

const (
	StreamTLS      StreamKind = iota // a TLS record: 0x14 to 0x17, then 0x03 0x00 to 0x04
	StreamSSH                        // an "SSH-" banner
	StreamSMTP                       // EHLO, HELO or LHLO
	StreamIMAP                       // "tag CAPABILITY|LOGIN|STARTTLS|AUTHENTICATE|ID|NOOP"
	StreamPOP3                       // CAPA, STLS, APOP
	StreamFTP                        // FEAT, SYST, OPTS, AUTH TLS/SSL, EPSV, PASV
	StreamFTPPOP3                    // USER: FTP or POP3, the same command
	StreamTunnel                     // other bytes after a CONNECT (HTTP inside included): not parsed
	StreamHTTP2                      // the HTTP/2 connection preface "PRI * HTTP/2.0" (prior knowledge, h2c)
	StreamXMPP                       // an XML declaration or <stream:stream>
	StreamLDAP                       // an LDAPMessage: a BER SEQUENCE, a messageID, an application-class operation
	StreamPostgres                   // a PostgreSQL SSLRequest, GSSENCRequest or version 3 StartupMessage
	StreamMySQL                      // a MySQL client's first packet: sequence 1, the 4.1 protocol flag
	StreamRDP                        // a TPKT header and an X.224 Connection Request (RDP)
	NumStreamKinds
)

var streamKindNames = [NumStreamKinds]string{"tls", "ssh", "smtp", "imap", "pop3", "ftp", "ftp/pop3", "tunnel", "http2",
	"xmpp", "ldap", "postgres", "mysql", "rdp"}

func (k StreamKind) String() string {
	if k < NumStreamKinds {
		return streamKindNames[k]
	}
	return "kind" + strconv.Itoa(int(k))
}

// NonHTTPCounts are the client streams recognised as another protocol,
// by kind; their bytes are skipped, not counted as HTTP parse errors.
type NonHTTPCounts [NumStreamKinds]uint64

// NonHTTPCountsCounters describes NonHTTPCounts (internal/counter): one
// counter a kind, "non_http:tls", one metric by kind. The summaries show
// only the kinds seen.
var NonHTTPCountsCounters = sync.OnceValue(func() counter.Table[NonHTTPCounts] {
	t := make(counter.Table[NonHTTPCounts], NumStreamKinds)
	for k := range NumStreamKinds {
		t[k] = counter.Desc[NonHTTPCounts]{Name: "non_http:" + k.String(), Help: "client streams recognised as " + k.String() + " and skipped",
			Metric: "non_http_streams", Label: "kind=" + k.String(), Text: k.String(), Sparse: true,
			MetricHelp: "Client streams recognised as another protocol (tls, ssh, smtp, imap, pop3, ftp, ftp/pop3, tunnel, http2, xmpp, ldap, postgres, mysql, rdp) and skipped, or read for their TLS start",
			Field:      func(s *NonHTTPCounts) *uint64 { return &s[k] }}
	}
	return t
})

// maxSniff bounds the bytes held to recognise the start of a stream (one
// SOCKS message, or the first line). Past it the stream is taken for HTTP.
const maxSniff = 1024

type sniffResult uint8

const (
	sniffMore    sniffResult = iota // need more bytes
	sniffHTTP                       // not recognised: parse as HTTP
	sniffSkip                       // a handshake message, n bytes: skipped, look again after it
	sniffNonHTTP                    // another protocol: skip the stream
)

// sniff recognises the start of a client stream, or of the bytes after a
// SOCKS handshake or an HTTP CONNECT: SOCKS4/4a/5 handshakes are skipped
// (their destination kept for a request without Host), a stream of
// another protocol is counted and skipped, anything else is parsed as
// HTTP. It returns the bytes left to parse as HTTP.
func (p *reqParser) sniff(data []byte) []byte {
	for {
		buf := data
		if len(p.line) > 0 {
			if !p.fits(p.line, len(p.line)+len(data)) {
				return p.sniffed(data)
			}
			p.line = append(p.line, data...)
			buf, data = p.line, nil
		}
		res, n, kind := p.recognise(buf)
		switch res {
		case sniffMore:
			if len(buf) >= maxSniff { // too long for a handshake or a first line
				return p.sniffed(data)
			}
			if len(p.line) == 0 {
				if !p.fits(p.line, len(buf)) {
					return p.sniffed(data)
				}
				p.line = append(p.line, buf...)
			}
			return nil
		case sniffNonHTTP:
			if !p.cfg.Takers[kind].Start && p.handOff(kind, buf, false) {
				// The whole stream is the other protocol's (the HTTP/2
				// preface): buf, from the start of the stream, is fed to
				// it (it may alias p.line, which nothing writes before
				// the other parser has read it).
				p.line = p.line[:0]
				return buf
			}
			p.state = stSkip
			p.pending = uint8(kind) + 1
			if p.cfg.Takers[kind].Start && p.handOff(kind, buf, false) {
				// Its start is read (a TLS ClientHello), into the other
				// parser's own buffer: buf may be p.line's array, which
				// is let go.
				p.line = nil
				return buf
			}
			p.line = p.line[:0]
			return nil
		case sniffHTTP:
			return p.sniffed(data)
		}
		// A handshake message: skip it and look at what follows.
		if len(p.line) > 0 {
			// The rest moves to the front of p.line; it is looked at again.
			p.line = p.line[:copy(p.line, p.line[n:])]
			data = nil
			if len(p.line) == 0 {
				return nil
			}
			data, p.line = p.line, p.line[:0]
			// data aliases p.line's array, which is empty: recognise reads
			// it in place and only the sniffMore branch above writes to
			// p.line, by copying data to the front (an overlapping copy
			// to a lower address, which append does safely).
			continue
		}
		data = buf[n:]
		if len(data) == 0 {
			return nil
		}
	}
}

// sniffed ends recognition: what p.line holds and data are parsed as HTTP.
// The held bytes are handed back for the line parser, which copies what it
// keeps of them to the front of p.line (a safe overlapping copy).
func (p *reqParser) sniffed(data []byte) []byte {
	p.state = stRequest
	if len(p.line) == 0 {
		return data
	}
	if len(data) > 0 {
		if !p.fits(p.line, len(p.line)+len(data)) {
			p.overBudget()
			return nil
		}
		p.line = append(p.line, data...)
	}
	held := p.line
	p.line = p.line[:0]
	return held
}

// recognise looks at the first bytes of a stream.
func (p *reqParser) recognise(b []byte) (res sniffResult, n int, kind StreamKind) {
	if len(b) == 0 {
		return sniffMore, 0, 0
	}
	if p.connected {
		return p.tunnelled(b)
	}
	switch b[0] {
	case 0x04:
		if p.socks == 0 {
			return p.socks4(b)
		}
	case 0x05:
		if p.socks == 0 {
			return p.socks5Greeting(b)
		}
		if p.socks == 5 {
			return p.socks5Request(b)
		}
	case 0x01:
		if p.socks == 5 { // username/password (RFC 1929)
			return socks5Auth(b)
		}
	case 0x14, 0x15, 0x16, 0x17:
		// A TLS record: 0x16 a handshake, the others a stream picked up
		// after its start (change cipher spec, alert, application data).
		if len(b) < 3 {
			return sniffMore, 0, 0
		}
		if b[1] == 0x03 && b[2] <= 0x04 {
			return sniffNonHTTP, 0, StreamTLS
		}
		return sniffHTTP, 0, 0
	}
	// Past a SOCKS handshake, a start that is not its next message ends
	// it: once the answer is final, not while more bytes are needed, so
	// that the answer is the same however the stream was split.
	res, kind = recogniseStart(b)
	if res != sniffMore {
		p.socks = 0
	}
	return res, 0, kind
}

// recogniseStart recognises a stream's first bytes that are neither SOCKS
// nor TLS: another protocol's first message, or HTTP.
func recogniseStart(b []byte) (sniffResult, StreamKind) {
	if res, kind, ok := binaryStart(b); ok {
		return res, kind
	}
	if !isTchar(b[0]) { // a method, an SMTP ... command or an IMAP tag (". CAPABILITY", "1 LOGIN") starts with a token
		return sniffHTTP, 0
	}
	if len(b) < 4 {
		if bytes.HasPrefix([]byte("SSH-"), b) {
			return sniffMore, 0
		}
	} else if string(b[:4]) == "SSH-" {
		return sniffNonHTTP, StreamSSH
	}
	// Only the first maxSniff bytes count, however they were split.
	i := bytes.IndexByte(b[:min(len(b), maxSniff)], '\n')
	if i < 0 {
		if len(b) >= maxSniff {
			return sniffHTTP, 0
		}
		return sniffMore, 0
	}
	if k, ok := commandKind(bytes.TrimRight(b[:i], "\r")); ok {
		return sniffNonHTTP, k
	}
	return sniffHTTP, 0
}

// binaryStart recognises the first message of a client of PostgreSQL,
// MySQL, RDP, LDAP or XMPP, protocols a client may start TLS in (no HTTP
// request starts so: a method is a token of letters). ok is false when b
// is none of them; sniffMore when more bytes are needed to tell.
func binaryStart(b []byte) (res sniffResult, kind StreamKind, ok bool) {
	need := func(n int) bool { return len(b) < n }
	// MySQL: a 3-byte little-endian length (a handshake response or SSL
	// request: 32 bytes or more), sequence 1, and capability flags with
	// CLIENT_PROTOCOL_41 (0x200). No HTTP method has a NUL third byte.
	if len(b) < 4 && (len(b) < 2 || b[1] <= 1<<12>>8) && (len(b) < 3 || b[2] == 0) {
		return sniffMore, 0, true // a MySQL packet's header may be coming
	}
	if len(b) >= 4 && b[2] == 0 && b[3] == 1 {
		if need(8) {
			return sniffMore, 0, true
		}
		if n := int(b[0]) | int(b[1])<<8; n >= 32 && n <= 1<<12 && binary.LittleEndian.Uint32(b[4:])&0x200 != 0 {
			return sniffNonHTTP, StreamMySQL, true
		}
	}
	switch b[0] {
	case 0x00: // PostgreSQL: length, then a request code or protocol 3.0
		if need(8) {
			return sniffMore, 0, true
		}
		n, code := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
		if n >= 8 && n <= 10000 && (code == 80877103 || code == 80877104 || code == 3<<16) {
			return sniffNonHTTP, StreamPostgres, true
		}
	case 0x03: // RDP: TPKT version 3, then X.224 with a Connection Request (0xE0)
		if need(6) {
			return sniffMore, 0, true
		}
		if b[1] == 0 && binary.BigEndian.Uint16(b[2:]) >= 11 && b[5]&0xf0 == 0xe0 {
			return sniffNonHTTP, StreamRDP, true
		}
	case 0x30: // LDAP: SEQUENCE, its length, INTEGER messageID, an [APPLICATION n] operation
		i := 2
		if len(b) >= 2 && b[1] > 0x80 {
			i += int(b[1] & 0x7f)
		}
		if need(i + 3) {
			return sniffMore, 0, true
		}
		if b[1] != 0x80 && i <= 6 && b[i] == 0x02 && b[i+1] >= 1 && b[i+1] <= 4 {
			if j := i + 2 + int(b[i+1]); need(j + 1) {
				return sniffMore, 0, true
			} else if b[j]&0xc0 == 0x40 {
				return sniffNonHTTP, StreamLDAP, true
			}
		}
	case '<': // XMPP: an XML declaration or the stream header
		for _, prefix := range [...]string{"<?xml", "<stream:stream"} {
			m := min(len(b), len(prefix))
			if string(b[:m]) == prefix[:m] {
				if m < len(prefix) {
					return sniffMore, 0, true
				}
				return sniffNonHTTP, StreamXMPP, true
			}
		}
	}
	return 0, 0, false
}

// commandKind recognises the first command a client sends to a
// server-first text protocol.
func commandKind(line []byte) (StreamKind, bool) {
	if string(line) == "PRI * HTTP/2.0" {
		return StreamHTTP2, true
	}
	if bytes.HasSuffix(line, []byte(" HTTP/1.0")) || bytes.HasSuffix(line, []byte(" HTTP/1.1")) {
		return 0, false
	}
	word, rest, _ := bytes.Cut(line, []byte(" "))
	if len(word) == 4 {
		var w [4]byte
		for i, c := range word {
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			w[i] = c
		}
		switch string(w[:]) {
		case "EHLO", "HELO", "LHLO":
			return StreamSMTP, true
		case "CAPA", "STLS", "APOP":
			return StreamPOP3, true
		case "FEAT", "SYST", "OPTS", "EPSV", "PASV":
			return StreamFTP, true
		case "AUTH":
			if equalFold(rest, "tls") || equalFold(rest, "ssl") {
				return StreamFTP, true
			}
		case "USER":
			return StreamFTPPOP3, true
		}
	}
	// IMAP: a tag (an atom) and a command.
	if len(word) == 0 || len(word) > 32 {
		return 0, false
	}
	for _, c := range word {
		if !isTchar(c) {
			return 0, false
		}
	}
	cmd, _, _ := bytes.Cut(rest, []byte(" "))
	for _, c := range [...]string{"capability", "login", "starttls", "authenticate", "id", "noop"} {
		if equalFold(cmd, c) {
			return StreamIMAP, true
		}
	}
	return 0, false
}

// socks4 reads a SOCKS4 or SOCKS4a request: VN=4 CD DSTPORT DSTIP USERID
// NUL, and for 4a (DSTIP 0.0.0.x, x != 0) a domain name and NUL.
func (p *reqParser) socks4(b []byte) (sniffResult, int, StreamKind) {
	if len(b) < 2 {
		return sniffMore, 0, 0
	}
	if b[1] != 1 && b[1] != 2 { // CONNECT, BIND
		return sniffHTTP, 0, 0
	}
	if len(b) < 9 {
		return sniffMore, 0, 0
	}
	// A USERID (and a 4a name) of over 255 bytes is not SOCKS, whether its
	// NUL has come yet or not: the same answer for a stream read whole or
	// in pieces.
	user := bytes.IndexByte(b[8:], 0)
	if user < 0 || user > 255 {
		if user > 255 || len(b) > 8+255 {
			return sniffHTTP, 0, 0
		}
		return sniffMore, 0, 0
	}
	n := 8 + user + 1
	port := binary.BigEndian.Uint16(b[2:4])
	if b[4] == 0 && b[5] == 0 && b[6] == 0 && b[7] != 0 { // 4a
		name := bytes.IndexByte(b[n:], 0)
		if name < 0 || name > 255 {
			if name > 255 || len(b)-n > 255 {
				return sniffHTTP, 0, 0
			}
			return sniffMore, 0, 0
		}
		p.setDest(b[n:n+name], netip.Addr{}, port)
		return sniffSkip, n + name + 1, 0
	}
	p.setDest(nil, netip.AddrFrom4([4]byte(b[4:8])), port)
	return sniffSkip, n, 0
}

// socks5Greeting reads VER=5 NMETHODS METHODS.
func (p *reqParser) socks5Greeting(b []byte) (sniffResult, int, StreamKind) {
	if len(b) < 2 {
		return sniffMore, 0, 0
	}
	if b[1] == 0 {
		return sniffHTTP, 0, 0
	}
	n := 2 + int(b[1])
	if len(b) < n {
		return sniffMore, 0, 0
	}
	p.socks = 5
	return sniffSkip, n, 0
}

// socks5Auth reads a username/password request (RFC 1929): VER=1 ULEN
// UNAME PLEN PASSWD.
func socks5Auth(b []byte) (sniffResult, int, StreamKind) {
	if len(b) < 2 {
		return sniffMore, 0, 0
	}
	n := 2 + int(b[1])
	if len(b) < n+1 {
		return sniffMore, 0, 0
	}
	n += 1 + int(b[n])
	if len(b) < n {
		return sniffMore, 0, 0
	}
	return sniffSkip, n, 0
}

// socks5Request reads VER=5 CMD RSV=0 ATYP DST.ADDR DST.PORT.
func (p *reqParser) socks5Request(b []byte) (sniffResult, int, StreamKind) {
	if len(b) < 5 {
		return sniffMore, 0, 0
	}
	if b[1] < 1 || b[1] > 3 || b[2] != 0 {
		p.socks = 0
		return sniffHTTP, 0, 0
	}
	var n int
	switch b[3] {
	case 1:
		n = 4 + 4
	case 4:
		n = 4 + 16
	case 3:
		n = 5 + int(b[4])
	default:
		p.socks = 0
		return sniffHTTP, 0, 0
	}
	if len(b) < n+2 {
		return sniffMore, 0, 0
	}
	port := binary.BigEndian.Uint16(b[n:])
	switch b[3] {
	case 1:
		p.setDest(nil, netip.AddrFrom4([4]byte(b[4:8])), port)
	case 4:
		p.setDest(nil, netip.AddrFrom16([16]byte(b[4:20])), port)
	default:
		p.setDest(b[5:n], netip.Addr{}, port)
	}
	p.socks = 0
	return sniffSkip, n + 2, 0
}

// setDest keeps a SOCKS destination, "host[:port]" (port unless 80), at
// the front of p.req, where the memory caps count it.
func (p *reqParser) setDest(name []byte, addr netip.Addr, port uint16) {
	p.destPort = port
	if !p.fits(p.req, len(name)+len("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535")) {
		p.req, p.dest = p.req[:0], 0 // no room under the caps: the server's address will do
		return
	}
	d := p.req[:0]
	if name != nil {
		d = record.AppendHostName(d, name) // never a URL delimiter
	} else {
		d = appendHostPort(d, netip.AddrPortFrom(addr, 80))
	}
	if port != 80 {
		d = append(d, ':')
		d = strconv.AppendUint(d, uint64(port), 10)
	}
	p.req, p.dest = d, int32(len(d))
}

// collect moves the parser's counts into s.
func (p *reqParser) collect(s *Stats) {
	s.ParseErrors += uint64(p.errors)
	p.errors = 0
	if p.pending != 0 {
		s.NonHTTP[p.pending-1]++
		p.pending = 0
	}
}

// tunnelled looks at the bytes after a CONNECT. Another CONNECT is the
// client's retry after a 407 (with credentials), and an HTTP/1 request
// line is plain HTTP to the far end (as tshark reads it): both are
// parsed, a request without Host at the authority the CONNECT opened.
// TLS and the HTTP/2 preface (h2c, prior knowledge) are handed to their
// protocols, SSH counted as such, anything else counted as StreamTunnel
// and skipped.
func (p *reqParser) tunnelled(b []byte) (sniffResult, int, StreamKind) {
	for _, prefix := range [...]string{"SSH-", "\x16\x03", prefaceLine} {
		if len(b) < len(prefix) && string(b) == prefix[:len(b)] {
			return sniffMore, 0, 0
		}
	}
	switch {
	case bytes.HasPrefix(b, []byte("\x16\x03")):
		p.connected = false
		return sniffNonHTTP, 0, StreamTLS
	case bytes.HasPrefix(b, []byte("SSH-")):
		p.connected = false
		return sniffNonHTTP, 0, StreamSSH
	case bytes.HasPrefix(b, []byte(prefaceLine)):
		p.connected = false
		return sniffNonHTTP, 0, StreamHTTP2 // h2c through the tunnel: read when h2c is
	}
	if len(b) > 0 && tchar[b[0]] { // a request line? It must end in HTTP/1.x
		line := b[:min(len(b), maxSniff)]
		i := bytes.IndexByte(line, '\n')
		if i < 0 && len(line) < maxSniff {
			return sniffMore, 0, 0
		}
		if i >= 0 {
			l := bytes.TrimRight(line[:i], "\r")
			if bytes.HasSuffix(l, []byte(" HTTP/1.1")) || bytes.HasSuffix(l, []byte(" HTTP/1.0")) {
				p.connected = false
				return sniffHTTP, 0, 0
			}
		}
	}
	p.connected = false
	return sniffNonHTTP, 0, StreamTunnel
}

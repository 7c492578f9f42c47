package http1

import (
	"reflect"
	"strings"
	"testing"
)

// sniffParse feeds stream like parse and returns "METHOD URL" (with
// " tunnel" for a CONNECT), the parse errors and the non-HTTP counts.
func sniffParse(stream string, piece int) ([]string, Stats) {
	p := newReqParser(1024)
	var got []string
	emit := func(r *request) {
		s := string(r.method) + " " + string(appendURL(nil, r, testServer))
		if r.tunnel {
			s += " tunnel"
		}
		got = append(got, s)
	}
	b := []byte(stream)
	if piece == 0 {
		piece = len(b) + 1
	}
	for len(b) > 0 {
		n := min(piece, len(b))
		p.feed(b[:n], emit)
		b = b[n:]
	}
	p.close(emit)
	var s Stats
	p.collect(&s)
	return got, s
}

const (
	getHost   = "GET /p HTTP/1.1\r\nHost: h.example\r\n\r\n"
	getNoHost = "GET /p HTTP/1.0\r\n\r\n"
	tlsHello  = "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03GET / HTTP/1.1\r\n\r\n"
)

func TestSniffStreams(t *testing.T) {
	kinds := func(k StreamKind) (c NonHTTPCounts) { c[k] = 1; return c }
	tests := []struct {
		name    string
		stream  string
		want    []string
		errors  uint64
		nonHTTP NonHTTPCounts
	}{
		{"socks4 then Host", "\x04\x01\x1f\x90\xc0\x00\x02\x01user\x00" + getHost,
			[]string{"GET http://h.example/p"}, 0, NonHTTPCounts{}},
		{"socks4 without Host: its destination", "\x04\x01\x1f\x90\xc6\x33\x64\x07\x00" + getNoHost,
			[]string{"GET http://198.51.100.7:8080/p"}, 0, NonHTTPCounts{}},
		{"socks4 port 80 dropped", "\x04\x01\x00\x50\xc6\x33\x64\x07\x00" + getNoHost,
			[]string{"GET http://198.51.100.7/p"}, 0, NonHTTPCounts{}},
		{"socks4a domain", "\x04\x01\x1f\x90\x00\x00\x00\x01\x00www.example.org\x00" + getNoHost,
			[]string{"GET http://www.example.org:8080/p"}, 0, NonHTTPCounts{}},
		{"socks5 no auth, IPv4", "\x05\x01\x00" + "\x05\x01\x00\x01\xc6\x33\x64\x07\x1f\x90" + getNoHost,
			[]string{"GET http://198.51.100.7:8080/p"}, 0, NonHTTPCounts{}},
		{"socks5 IPv6", "\x05\x02\x00\x02" + "\x05\x01\x00\x04\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x50" + getNoHost,
			[]string{"GET http://[2001:db8::1]/p"}, 0, NonHTTPCounts{}},
		{"socks5 user/password, domain, Host wins", "\x05\x01\x02" + "\x01\x04user\x06secret" + "\x05\x01\x00\x03\x0bexample.net\x01\xbb" + getHost,
			[]string{"GET http://h.example/p"}, 0, NonHTTPCounts{}},
		{"socks5 domain without Host", "\x05\x01\x00" + "\x05\x01\x00\x03\x0bexample.net\x1f\x90" + getNoHost + getNoHost,
			[]string{"GET http://example.net:8080/p", "GET http://example.net:8080/p"}, 0, NonHTTPCounts{}},
		{"socks5 domain with URL delimiters", "\x05\x01\x00" + "\x05\x01\x00\x03\x05a/b@c\x00\x50" + getNoHost,
			[]string{"GET http://a_b_c/p"}, 0, NonHTTPCounts{}},
		{"socks5 to TLS", "\x05\x01\x00" + "\x05\x01\x00\x03\x0bexample.net\x01\xbb" + tlsHello,
			nil, 0, kinds(StreamTLS)},
		{"CONNECT then TLS", "CONNECT h.example:443 HTTP/1.1\r\nHost: h.example:443\r\n\r\n" + tlsHello,
			[]string{"CONNECT h.example:443 tunnel"}, 0, kinds(StreamTLS)},
		{"CONNECT retried after a 407", "CONNECT h.example:443 HTTP/1.1\r\n\r\nCONNECT h.example:443 HTTP/1.1\r\nProxy-Authorization: Basic eA==\r\n\r\n" + tlsHello,
			[]string{"CONNECT h.example:443 tunnel", "CONNECT h.example:443 tunnel"}, 0, kinds(StreamTLS)},
		{"CONNECT then HTTP/1 inside: parsed, as tshark does", "CONNECT h.example:80 HTTP/1.1\r\n\r\n" + getHost + getHost,
			[]string{"CONNECT h.example:80 tunnel", "GET http://h.example/p", "GET http://h.example/p"}, 0, NonHTTPCounts{}},
		{"CONNECT then HTTP/1 without Host: at the authority it opened", "CONNECT u:pw@far.example:8080 HTTP/1.1\r\n\r\n" + getNoHost,
			[]string{"CONNECT far.example:8080 tunnel", "GET http://far.example:8080/p"}, 0, NonHTTPCounts{}},
		{"CONNECT then a line that is no request", "CONNECT h.example:80 HTTP/1.1\r\n\r\nHELLO there\r\n" + getHost,
			[]string{"CONNECT h.example:80 tunnel"}, 0, kinds(StreamTunnel)},
		{"CONNECT then opaque bytes", "CONNECT h.example:5222 HTTP/1.1\r\n\r\n<stream:stream>\r\n" + getHost,
			[]string{"CONNECT h.example:5222 tunnel"}, 0, kinds(StreamTunnel)},
		{"CONNECT then a short tunnel", "CONNECT h.example:443 HTTP/1.1\r\n\r\nC",
			[]string{"CONNECT h.example:443 tunnel"}, 0, NonHTTPCounts{}},
		{"CONNECT then SSH", "CONNECT h.example:22 HTTP/1.1\r\n\r\nSSH-2.0-OpenSSH_9.2\r\n" + getHost,
			[]string{"CONNECT h.example:22 tunnel"}, 0, kinds(StreamSSH)},
		{"TLS", tlsHello + getHost, nil, 0, kinds(StreamTLS)},
		{"TLS picked up mid-stream", "\x17\x03\x03\x00\x20" + getHost, nil, 0, kinds(StreamTLS)},
		{"TLS alert", "\x15\x03\x03\x00\x02\x02\x28", nil, 0, kinds(StreamTLS)},
		{"not a TLS version", "\x17\x03\x09\x00\r\n" + getHost, []string{"GET http://h.example/p"}, 1, NonHTTPCounts{}},
		{"SSH", "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n\x00\x00\x05\xdc" + getHost, nil, 0, kinds(StreamSSH)},
		{"SMTP", "EHLO client.example\r\nMAIL FROM:<a@b>\r\n" + getHost, nil, 0, kinds(StreamSMTP)},
		{"SMTP lower case", "helo x\r\n", nil, 0, kinds(StreamSMTP)},
		{"IMAP", "a001 CAPABILITY\r\na002 LOGIN u p\r\n", nil, 0, kinds(StreamIMAP)},
		{"POP3", "CAPA\r\nUSER u\r\n", nil, 0, kinds(StreamPOP3)},
		{"FTP", "AUTH TLS\r\n", nil, 0, kinds(StreamFTP)},
		{"HTTP/2 with prior knowledge", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04\x00" + getHost, nil, 0, kinds(StreamHTTP2)},
		{"FTP or POP3", "USER anonymous\r\nPASS x\r\n", nil, 0, kinds(StreamFTPPOP3)},
		{"IMAP with a tag that is no letter", ". CAPABILITY\r\n. STARTTLS\r\n", nil, 0, kinds(StreamIMAP)},
		{"XMPP declaration", "<?xml version='1.0'?><stream:stream to='x'>", nil, 0, kinds(StreamXMPP)},
		{"XMPP stream header", "<stream:stream xmlns='jabber:client' to='x'>", nil, 0, kinds(StreamXMPP)},
		{"LDAP StartTLS", "\x30\x1d\x02\x01\x01\x77\x18\x80\x161.3.6.1.4.1.1466.20037", nil, 0, kinds(StreamLDAP)},
		{"LDAP bind, long-form length", "\x30\x81\x0c\x02\x02\x01\x00\x60\x07\x02\x01\x03\x04\x00\x80\x00", nil, 0, kinds(StreamLDAP)},
		{"PostgreSQL SSLRequest", "\x00\x00\x00\x08\x04\xd2\x16\x2f", nil, 0, kinds(StreamPostgres)},
		{"PostgreSQL startup", "\x00\x00\x00\x10\x00\x03\x00\x00user\x00u\x00\x00\x00", nil, 0, kinds(StreamPostgres)},
		{"MySQL SSL request", "\x20\x00\x00\x01\x8d\xa6\xff\x09" + strings.Repeat("\x00", 28), nil, 0, kinds(StreamMySQL)},
		{"RDP connection request", "\x03\x00\x00\x13\x0e\xe0\x00\x00\x00\x00\x00\x01\x00\x08\x00\x03\x00\x00\x00", nil, 0, kinds(StreamRDP)},
		{"binary that is none of them", "\x00\x00\x00\x08\x01\x02\x03\x04\r\n" + getHost, []string{"GET http://h.example/p"}, 1, NonHTTPCounts{}},
		{"HTTP method named like a command", "USER /x HTTP/1.1\r\nHost: h\r\n\r\n", []string{"USER http://h/x"}, 0, NonHTTPCounts{}},
		{"junk is still a parse error", "hello world\r\n" + getHost, []string{"GET http://h.example/p"}, 1, NonHTTPCounts{}},
		{"binary junk is still a parse error", "\x00\x01\x02\r\n" + getHost, []string{"GET http://h.example/p"}, 1, NonHTTPCounts{}},
		{"0x05 not a greeting", "\x05\x00\r\n" + getHost, []string{"GET http://h.example/p"}, 1, NonHTTPCounts{}},
		{"first line just under the sniff bound", "EHLO " + strings.Repeat("x", maxSniff-7) + "\r\n" + getHost, nil, 0, kinds(StreamSMTP)},
		{"first line just over the sniff bound", "EHLO " + strings.Repeat("x", maxSniff-5) + "\r\n" + getHost, []string{"GET http://h.example/p"}, 1, NonHTTPCounts{}},
		{"over-long first line is HTTP junk", strings.Repeat("x", 3000) + "\r\n" + getHost, []string{"GET http://h.example/p"}, 1, NonHTTPCounts{}},
		{"TLS later in a stream is junk", getHost + tlsHello, []string{"GET http://h.example/p"}, 1, NonHTTPCounts{}},
	}
	for _, tt := range tests {
		for _, piece := range []int{0, 1, 2, 3, 7, 64} {
			got, s := sniffParse(tt.stream, piece)
			if !reflect.DeepEqual(got, tt.want) || s.ParseErrors != tt.errors || s.NonHTTP != tt.nonHTTP {
				t.Errorf("%s (pieces of %d): got %q, %d errors, non-HTTP %v; want %q, %d, %v",
					tt.name, piece, got, s.ParseErrors, s.NonHTTP, tt.want, tt.errors, tt.nonHTTP)
			}
		}
	}
}

// Recognising the start of a stream allocates nothing once the parser's
// buffers exist.
func TestSniffAllocations(t *testing.T) {
	streams := []string{
		"\x05\x01\x00" + "\x05\x01\x00\x03\x0bexample.net\x1f\x90" + getNoHost,
		"\x04\x01\x1f\x90\x00\x00\x00\x01\x00www.example.org\x00" + getNoHost,
		tlsHello, "EHLO x\r\n", "CONNECT h:443 HTTP/1.1\r\n\r\n" + tlsHello,
	}
	for _, s := range streams {
		p := newReqParser(1024)
		emit := func(r *request) {}
		b := []byte(s)
		run := func() {
			p.state, p.socks = stSniff, 0
			for i := 0; i < len(b); i += 5 {
				p.feed(b[i:min(i+5, len(b))], emit)
			}
			p.close(emit)
		}
		run()
		if a := testing.AllocsPerRun(100, run); a != 0 {
			t.Errorf("%q: %v allocations", s, a)
		}
	}
}

// A SOCKS destination is kept only when the memory caps leave room for
// it; without, a request without Host takes the server's address.
func TestSniffDestOverBudget(t *testing.T) {
	for _, budget := range []int{16, 1 << 20} {
		p := newReqParser(1024)
		p.budget = budget
		var got string
		p.feed([]byte("\x05\x01\x00"+"\x05\x01\x00\x03\x0bexample.net\x1f\x90"+getNoHost), func(r *request) {
			got = string(appendURL(nil, r, testServer))
		})
		want := "http://example.net:8080/p"
		if budget < 64 {
			want = "http://192.0.2.1:8080/p"
		}
		if got != want || cap(p.req) > budget {
			t.Errorf("budget %d: %q, %d bytes held; want %q", budget, got, cap(p.req), want)
		}
	}
}

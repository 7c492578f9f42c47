package h2c

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingConn keeps a copy of what the client writes.
type recordingConn struct {
	net.Conn
	mu  sync.Mutex
	out bytes.Buffer
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.out.Write(p)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestGoClient runs Go's own HTTP/2 client and server (net/http,
// unencrypted HTTP/2 with prior knowledge) on loopback: several requests
// on one connection, with a request body, trailers and a Host other than
// the address. What the client wrote must decode to what the server saw.
func TestGoClient(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	protos := new(http.Protocols)
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: protos, ReadHeaderTimeout: 30 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if r.ProtoMajor != 2 {
				t.Errorf("server saw %s", r.Proto)
			}
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s http %s %s", r.Method, r.Host, r.URL.RequestURI()))
			mu.Unlock()
			io.WriteString(w, "ok\n")
		})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	var conns []*recordingConn
	tr := &http.Transport{Protocols: protos,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			rc := &recordingConn{Conn: c}
			mu.Lock()
			conns = append(conns, rc)
			mu.Unlock()
			return rc, nil
		}}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	base := "http://" + ln.Addr().String()
	do := func(method, path, host string, body io.Reader, trailer http.Header) {
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host, req.Trailer = host, trailer
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do("GET", "/index.html", "", nil, nil)
	do("GET", "/index.html", "", nil, nil)
	do("GET", "/a/b?c=d&e=%20f", "", nil, nil)
	do("POST", "/upload", "", strings.NewReader(strings.Repeat("body ", 10000)), nil)
	do("PUT", "/with-trailers", "", io.MultiReader(strings.NewReader("chunk")), http.Header{"X-Checksum": {"abc"}})
	do("GET", "/after-trailers", "", nil, nil)
	do("GET", "/vhost", "virtual.example", nil, nil)
	do("DELETE", "/item/7", "", nil, nil)

	mu.Lock()
	defer mu.Unlock()
	if len(conns) != 1 {
		t.Fatalf("%d connections, want one", len(conns))
	}
	conns[0].mu.Lock()
	data := bytes.Clone(conns[0].out.Bytes())
	conns[0].mu.Unlock()
	var got []string
	d := NewDecoder(PriorKnowledge)
	// In TCP-segment-sized pieces.
	for len(data) > 0 {
		n := min(len(data), 1460)
		if err := d.Feed(data[:n], func(r *Request) {
			got = append(got, fmt.Sprintf("%s %s %s %s", r.Method, r.Scheme, r.Authority, r.Path))
		}); err != nil {
			t.Fatalf("%v after %q", err, got)
		}
		data = data[n:]
	}
	if strings.Join(got, "\n") != strings.Join(seen, "\n") || len(got) != 8 {
		t.Errorf("decoded\n%q\nserver saw\n%q", got, seen)
	}
}

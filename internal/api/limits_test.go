package api_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/api"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

func newAPI(t *testing.T, opts *api.Options) (*api.Server, *httptest.Server) {
	t.Helper()
	d := statetest.Bitmap(t)
	a := api.New(d, opts)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return a, srv
}

// stalled opens a connection that sends a request's head and the first
// bytes of its body, then nothing. The connection is closed when the test
// ends.
func stalled(t *testing.T, srv *httptest.Server, head, first string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := fmt.Fprintf(c, "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n%s\r\n%s", head, first); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// answer reads the response on a stalled connection, within limit.
func answer(t *testing.T, c net.Conn, r *bufio.Reader, limit time.Duration) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", limit, err)
	}
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	resp.Body.Close()
	return resp, b.String()
}

// waitInflight waits, bounded, until the server holds want bytes.
func waitInflight(t *testing.T, a *api.Server, want int64) {
	t.Helper()
	for i := 0; a.InflightBytes() != want; i++ {
		if i == 200 {
			t.Fatalf("%d bytes in flight, want %d", a.InflightBytes(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Bodies held by stalled clients count against MaxInflightBytes; a body
// that does not fit is 503 with Retry-After, whether its length is given
// or it comes chunked; GETs and small batches still pass; all of it is
// given back when the stalled clients go.
func TestInflightBytesCap(t *testing.T) {
	a, srv := newAPI(t, &api.Options{MaxInflightBytes: 1 << 20, BodyTimeout: time.Minute})
	u := srv.URL + "/v1/check"
	c1, _ := stalled(t, srv, "Content-Length: 600000\r\n", "http://a/\n")
	waitInflight(t, a, 600000)
	c2, _ := stalled(t, srv, "Content-Length: 200000\r\n", "http://b/\n")
	waitInflight(t, a, 800000) // of the 838,861 requests share beyond their own 204 bytes

	tests := []struct {
		name, head, body string
		code             int
		msg              string
	}{
		{"length over the rest", "Content-Length: 100000\r\n", "", 503, "over the limit of 1048576"},
		{"length over the cap", "Content-Length: 2000000\r\n", "", 413, "body of 2000000 bytes, over the limit of 838861"},
		{"chunked over the rest", "Transfer-Encoding: chunked\r\n", "10000\r\n" + strings.Repeat("x", 0x10000) + "\r\n", 503, "over the limit of 1048576"},
	}
	for _, tt := range tests {
		c, r := stalled(t, srv, tt.head, tt.body)
		resp, body := answer(t, c, r, 5*time.Second)
		if resp.StatusCode != tt.code || !strings.Contains(body, tt.msg) {
			t.Errorf("%s: %d %q; want %d with %q", tt.name, resp.StatusCode, body, tt.code, tt.msg)
		}
		if tt.code == 503 && resp.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: Retry-After %q", tt.name, resp.Header.Get("Retry-After"))
		}
	}
	if code, body := do(t, "GET", u+"?url=http://c.example/", "", ""); code != 200 || body != "new\n" {
		t.Fatalf("GET while the budget is held: %d %q", code, body)
	}
	if code, body := do(t, "POST", u, "text/plain", "http://d.example/\n"); code != 200 || body != "new\n" {
		t.Fatalf("small batch while the budget is held: %d %q", code, body)
	}
	c1.Close()
	c2.Close()
	waitInflight(t, a, 0)
	if code, _ := do(t, "POST", u, "text/plain", strings.Repeat("http://e.example/\n", 10000)); code != 200 {
		t.Fatalf("180 kB batch after the stalled clients left: %d", code)
	}
	waitInflight(t, a, 0)
}

// A fifth of the budget is kept in equal shares, one per connection
// (MaxConns 10 of 1,000,000 bytes: 20,000 each), and requests share the
// other four fifths (800,000, also the cap on one body) for what they hold
// beyond their share: a request one byte over what is left of that is
// refused, while requests within their share pass up to the whole budget,
// which stays a hard cap when more requests than MaxConns are served.
func TestInflightShares(t *testing.T) {
	a, srv := newAPI(t, &api.Options{MaxInflightBytes: 1000000, MaxConns: 10, BodyTimeout: time.Minute})
	stalled(t, srv, "Content-Length: 800000\r\n", "http://a/\n") // 20,000 of its share, 780,000 shared
	waitInflight(t, a, 800000)
	c, r := stalled(t, srv, "Content-Length: 40001\r\n", "http://a/\n")
	if resp, msg := answer(t, c, r, 5*time.Second); resp.StatusCode != 503 || !strings.Contains(msg, "beyond its own 20000, a request shares 800000") {
		t.Fatalf("upload 1 byte over its share and what is left of the rest: %d %q", resp.StatusCode, msg)
	}
	stalled(t, srv, "Content-Length: 40000\r\n", "http://a/\n")
	waitInflight(t, a, 840000)
	var small []net.Conn
	for range 8 { // 10 requests in all
		c, _ := stalled(t, srv, "Content-Length: 20000\r\n", "http://a/\n")
		small = append(small, c)
	}
	waitInflight(t, a, 1000000)
	if code, body := do(t, "GET", srv.URL+"/v1/check?url=http://b/", "", ""); code != 200 || body != "new\n" {
		t.Fatalf("GET with the whole budget held: %d %q", code, body)
	}
	c, r = stalled(t, srv, "Content-Length: 1\r\n", "a") // an 11th request
	if resp, msg := answer(t, c, r, 5*time.Second); resp.StatusCode != 503 {
		t.Fatalf("request beyond MaxConns with the whole budget held: %d %q", resp.StatusCode, msg)
	}
	small[0].Close()
	waitInflight(t, a, 980000)
	if code, body := do(t, "POST", srv.URL+"/v1/check", "text/plain", "http://c/\n"); code != 200 || body != "new\n" {
		t.Fatalf("small batch within its share: %d %q", code, body)
	}
	if code, body := do(t, "POST", srv.URL+"/v1/check", "text/plain", strings.Repeat("x", 800001)); code != 413 || !strings.Contains(body, "over the limit of 800000") {
		t.Fatalf("body over 4/5 of the budget: %d %q", code, body)
	}
}

// A chunked body is capped at MaxBody too, and the per-URL charge of a
// batch counts against the budget.
func TestInflightChunkedAndPerURL(t *testing.T) {
	a, srv := newAPI(t, &api.Options{MaxBody: 100000, MaxInflightBytes: 300000, MaxBatch: 1 << 20})
	chunk := "http://a.example/\n"
	var body strings.Builder
	for range 120000 / len(chunk) {
		body.WriteString(fmt.Sprintf("%x\r\n%s\r\n", len(chunk), chunk))
	}
	c, r := stalled(t, srv, "Transfer-Encoding: chunked\r\n", body.String()+"0\r\n\r\n")
	if resp, msg := answer(t, c, r, 5*time.Second); resp.StatusCode != 413 || !strings.Contains(msg, "body over the limit of 100000 bytes") {
		t.Fatalf("chunked body over MaxBody: %d %q", resp.StatusCode, msg)
	}
	// 50,000 URLs of 2 bytes: 100 kB of body, 2 MB of slices, more than
	// the whole budget.
	if code, msg := do(t, "POST", srv.URL+"/v1/check", "text/plain", strings.Repeat("a\n", 50000)); code != 413 || !strings.Contains(msg, "send smaller batches") {
		t.Fatalf("batch whose URLs do not fit: %d %q", code, msg)
	}
	waitInflight(t, a, 0)
}

// A body that does not arrive within BodyTimeout is 408, and the
// connection is closed; the budget it held comes back.
func TestBodyTimeout(t *testing.T) {
	a, srv := newAPI(t, &api.Options{BodyTimeout: 500 * time.Millisecond})
	for _, head := range []string{"Content-Length: 1000\r\n", "Transfer-Encoding: chunked\r\n"} {
		first := "http://a/"
		if strings.Contains(head, "chunked") {
			first = "9\r\nhttp://a/\r\n"
		}
		start := time.Now()
		c, r := stalled(t, srv, head, first)
		resp, body := answer(t, c, r, 30*time.Second)
		// Answered at the timeout, not at the end of the client's body:
		// the bound leaves a busy machine 20 times the timeout.
		if took := time.Since(start); resp.StatusCode != 408 || !strings.Contains(body, "body not received within 500ms") || took > 10*time.Second {
			t.Errorf("%s: %d %q after %v; want 408 after 500ms", head, resp.StatusCode, body, took)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: connection still open after a 408 (%d, %v)", head, n, err)
		}
		t.Logf("%s: closed %v after the request", head, time.Since(start))
	}
	waitInflight(t, a, 0)
}

// Drain answers the requests still receiving their body at once, and
// refuses new bodies; GETs are still answered.
func TestDrain(t *testing.T) {
	a, srv := newAPI(t, &api.Options{BodyTimeout: time.Minute})
	var conns []net.Conn
	var readers []*bufio.Reader
	for range 20 {
		c, r := stalled(t, srv, "Content-Length: 1000\r\n", "http://a/")
		conns, readers = append(conns, c), append(readers, r)
	}
	waitInflight(t, a, 20*1000)
	start := time.Now()
	a.Drain()
	for i, c := range conns {
		resp, body := answer(t, c, readers[i], 30*time.Second)
		if resp.StatusCode != 503 || !strings.Contains(body, "shutting down") {
			t.Fatalf("stalled client %d: %d %q", i, resp.StatusCode, body)
		}
	}
	if took := time.Since(start); took > 20*time.Second { // the body timeout is a minute
		t.Fatalf("20 stalled clients answered in %v", took)
	}
	if code, body := do(t, "POST", srv.URL+"/v1/check", "text/plain", "http://b/\n"); code != 503 || !strings.Contains(body, "shutting down") {
		t.Fatalf("body after Drain: %d %q", code, body)
	}
	if code, body := do(t, "GET", srv.URL+"/v1/check?url=http://b/", "", ""); code != 200 || body != "new\n" {
		t.Fatalf("GET after Drain: %d %q", code, body)
	}
	waitInflight(t, a, 0)
}

// Bodies over 1 MiB (mapped outside the Go heap, unmapped after the
// request), sent with a length or chunked, as text or JSON, are read and
// decided whole, again and again.
func TestBigBodies(t *testing.T) {
	a, srv := newAPI(t, nil)
	var text, js strings.Builder
	js.WriteString("[")
	const n = 60000
	for i := range n {
		u := fmt.Sprintf("http://big.example/%d/%s", i, strings.Repeat("p", 20))
		text.WriteString(u + "\n")
		if i > 0 {
			js.WriteString(",")
		}
		js.WriteString(`"` + strings.ReplaceAll(u, "/", `\/`) + `"`)
	}
	js.WriteString("]")
	if text.Len() < 2<<20 {
		t.Fatalf("text body of %d bytes, want over 2 MiB", text.Len())
	}
	for round := range 3 {
		for _, tc := range []struct {
			name, ctype string
			body        io.Reader
			want        string
			count       int
		}{
			// The first text batch sets the bits; the rest are dry runs.
			{"text", "text/plain", strings.NewReader(text.String()), "dup\n", n},
			{"chunked", "text/plain", io.MultiReader(strings.NewReader(text.String())), "dup\n", n},
			{"JSON", "application/json", strings.NewReader(js.String()), `"dup"`, n + 1}, // and "dup":N
		} {
			first := round == 0 && tc.name == "text"
			if first {
				tc.want = "new\n"
			}
			resp, err := http.Post(srv.URL+"/v1/check?dry_run="+fmt.Sprint(!first), tc.ctype, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := strings.Count(string(b), tc.want); resp.StatusCode != 200 || got != tc.count {
				t.Fatalf("round %d, %s: %d, %d of %d %q", round, tc.name, resp.StatusCode, got, tc.count, tc.want)
			}
		}
	}
	waitInflight(t, a, 0)
}

// A batch whose URLs do not fit in the budget is refused, 413 since
// retrying would not help, before the slices that would hold them are
// made: 50,000 URLs of 2 bytes are 100 kB
// of body but 1.2 MB of slices, which 400 such requests at once would make
// 480 MB outside the cap.
func TestURLSlicesChargedBeforeParse(t *testing.T) {
	a, _ := newAPI(t, &api.Options{MaxBody: 200000, MaxInflightBytes: 300000, MaxBatch: 1 << 20})
	h := a.Handler()
	body := strings.Repeat("a\n", 50000)
	post := func() (int, string) {
		req := httptest.NewRequest("POST", "/v1/check", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	post() // the pool's first batch
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, msg := post()
	runtime.ReadMemStats(&after)
	if code != 413 || !strings.Contains(msg, "needs at least 2100040 bytes in flight") {
		t.Fatalf("batch whose URLs do not fit: %d %q", code, msg)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 600<<10 {
		t.Errorf("refusing it allocated %d bytes: the URL slices were made before the budget was asked", n)
	}
	if a.InflightBytes() != 0 {
		t.Errorf("%d bytes still in flight", a.InflightBytes())
	}
}

// The charge made before parsing is close to what the URLs take: JSON
// URLs with commas in them are not counted once per comma, so a batch that
// fits in a small budget is decided, not refused for ever.
func TestURLChargeCommasInJSON(t *testing.T) {
	a, srv := newAPI(t, &api.Options{MaxInflightBytes: 100000})
	var body strings.Builder
	body.WriteString("[")
	for i := range 500 { // 500 URLs, 60 bytes each with 8 commas: 32 kB of body, 20 kB of slices
		if i > 0 {
			body.WriteString(",")
		}
		fmt.Fprintf(&body, `"http://a.example/x?a=1,2,3,4,5,6,7,8&n=%05d"`, i)
	}
	body.WriteString("]")
	if code, msg := do(t, "POST", srv.URL+"/v1/check", "application/json", body.String()); code != 200 || !strings.Contains(msg, `"new":500`) {
		t.Fatalf("JSON batch that fits the budget: %d %q", code, msg)
	}
	waitInflight(t, a, 0)
}

// A batch that could never fit in the budget is 413, not a 503 that
// retrying never gets past, even when it is over MaxBatch (1,500 URLs of
// 46 bytes: 69 kB of body and 40 kB of slices, where one request may hold
// 100,024 bytes of a 125 kB budget: four fifths and its share of the
// rest); one that fits is refused for its size or decided.
func TestBatchOverBudgetIs413(t *testing.T) {
	a, srv := newAPI(t, &api.Options{MaxInflightBytes: 125000, MaxBatch: 1000})
	batch := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "http://over.example/%025d\n", i)
		}
		return b.String()
	}
	for _, tt := range []struct {
		name string
		n    int
		code int
		msg  string
	}{
		{"over MaxBatch", 1500, 413, fmt.Sprintf("batch of %d bytes (up to 1501 URLs) needs at least %d bytes in flight (its body and 40 a URL), over the limit of 100024 for one request: send smaller batches", 1500*46, 1500*46+1001*40)},
		{"over MaxBatch, fits the budget", 1001, 413, "batch over the limit of 1000 URLs"},
		{"within MaxBatch", 1000, 200, strings.Repeat("new\n", 1000)},
	} {
		body := batch(tt.n)
		code, msg := do(t, "POST", srv.URL+"/v1/check?dry_run=1", "text/plain", body)
		if code != tt.code || !strings.Contains(msg, tt.msg) {
			t.Errorf("%s (%d bytes): %d %.200q", tt.name, len(body), code, msg)
		}
		waitInflight(t, a, 0)
	}
}

// upload is a connection whose chunked body declares one chunk of 1 MiB,
// sends sent bytes of it and stalls. The server's answer, if it gives one,
// arrives on answered; the channel is closed when the connection ends
// without one.
type upload struct {
	c        net.Conn
	answered chan *http.Response
}

// holds waits, bounded, until u's request either holds its bytes (the
// server holds want in all) or is refused 503 with Retry-After.
func holds(t *testing.T, a *api.Server, u *upload, want int64) bool {
	t.Helper()
	for i := 0; i < 2000; i++ {
		select {
		case resp := <-u.answered:
			if resp == nil || resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
				t.Fatalf("upload answered %v", resp)
			}
			return false
		default:
		}
		if a.InflightBytes() == want {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("upload neither holding its bytes (%d in flight, want %d) nor answered after 20 s", a.InflightBytes(), want)
	return false
}

func startUpload(t *testing.T, addr string, sent int) *upload {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	u := &upload{c: c, answered: make(chan *http.Response, 1)}
	go func() {
		// A refused upload is closed before all of it is written: the
		// error is expected, the answer is what the test looks at.
		fmt.Fprintf(c, "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n", 1<<20)
		c.Write([]byte(strings.Repeat("http://stalled.example/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", sent/64)))
	}()
	go func() {
		defer close(u.answered)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			u.answered <- resp
		}
	}()
	return u
}

// Stalled chunked uploads of 0.9 MiB, however many, do not shut small
// requests out: each request's first bytes come from its share of the
// reserved fifth of the budget (a fifth of 10 MiB over 1024 connections:
// 2 KiB), which others cannot take, so an 18-byte batch is decided at once,
// sent with a length or chunked. The uploads themselves are capped: they
// share the other four fifths, 8 MiB, so 8 of them hold 1 MiB each (2 KiB
// of it in their own share) and the rest are refused 503, and so is a
// 100 kB batch beyond its share.
func TestStalledUploadsLeaveSmallRequests(t *testing.T) {
	a, srv := newAPI(t, &api.Options{MaxInflightBytes: 10 << 20, BodyTimeout: time.Minute})
	addr := srv.Listener.Addr().String()
	var uploads []*upload
	held, refused := 0, 0
	for range 12 { // more than the budget holds: 10 on the old code, which had no shares
		before := a.InflightBytes()
		u := startUpload(t, addr, 900<<10)
		uploads = append(uploads, u)
		if holds(t, a, u, before+1<<20) {
			held++
		} else {
			refused++
		}
	}
	t.Logf("%d uploads hold %d bytes, %d refused", held, a.InflightBytes(), refused)

	small := "http://small.example/\n" // 18 bytes of URL and its newline
	if code, body := do(t, "POST", srv.URL+"/v1/check", "text/plain", small); code != 200 || body != "new\n" {
		t.Fatalf("small batch while stalled uploads fill the budget: %d %q", code, body)
	}
	resp, err := http.Post(srv.URL+"/v1/check", "text/plain", io.MultiReader(strings.NewReader(small+"http://small.example/b\n")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "dup\nnew\n" {
		t.Fatalf("small chunked batch while stalled uploads fill the budget: %d %q", resp.StatusCode, b)
	}
	if held != 8 || refused != 4 {
		t.Errorf("%d uploads held, %d refused; want 8 and 4", held, refused)
	}
	if code, body := do(t, "POST", srv.URL+"/v1/check", "text/plain", strings.Repeat("http://mid.example/\n", 5000)); code != 503 || !strings.Contains(body, "retry later") {
		t.Errorf("100 kB batch beyond its share with the rest held: %d %q", code, body)
	}
	for _, u := range uploads {
		u.c.Close()
	}
	waitInflight(t, a, 0)
}

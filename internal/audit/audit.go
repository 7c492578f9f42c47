// Package audit decides the HTTP requests found on the wire against the
// bitmap and writes the audit records: by default each URL the first time
// it is seen, or every request with its verdict, as text or JSON lines.
//
// There is one batching path: requests are queued in batches that go
// through an inflight.Window of the state's depth (0 for a local state,
// which answers at once). A live capture on a local state batches a few
// milliseconds at most (LiveOptions), so that the Bloom-family layouts take
// a lock per batch rather than per request.
package audit

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/communityid"
	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/inflight"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// Format selects what a Log writes.
type Format int

const (
	// NewURLs writes each new URL, one per line.
	NewURLs Format = iota
	// All writes every request as "new<TAB>URL" or "dup<TAB>URL", and
	// "<TAB>tunnel" after a CONNECT's authority.
	All
	// JSON writes every request as one JSON object per line, with the
	// fields ts, src, dst, method, url and new, and "tunnel":true for a
	// CONNECT (its url is the authority it opens, host:port). A record of
	// another protocol than HTTP/1.x has "proto" ("tls", "quic", "h2c");
	// one from a ClientHello has no method, and "sni", "alpn" (a list),
	// "versions" (a list, GREASE dropped), "ech":true and "ja4" as they
	// apply; an HTTP request its "user_agent" when it had one. Every record
	// has the "community_id" of its flow (Community ID v1, seed 0).
	JSON
	// NewJSON writes the requests whose URL is new, as JSON: the event log
	// of `urldedupd serve`.
	NewJSON
	// ECS writes every request as an Elastic Common Schema document, one
	// per line: the JSON record in ECS's field names (appendECS).
	ECS
	// NewECS writes the requests whose URL is new as ECS documents.
	NewECS
)

// Counts are the requests a Log has decided.
type Counts struct {
	Requests uint64
	New      uint64
	Dup      uint64
	Invalid  uint64 // URLs that could not be normalized (signed raw)
}

// CountsCounters describes Counts' counters (internal/counter).
var CountsCounters = counter.Table[Counts]{
	{Name: "requests", Help: "Requests found", Text: "requests", Field: func(c *Counts) *uint64 { return &c.Requests }},
	{Name: "new", Help: "Requests whose URL was new", Text: "new", Field: func(c *Counts) *uint64 { return &c.New }},
	{Name: "dup", Help: "Requests whose URL was seen before", Text: "dup", Metric: "duplicates", Field: func(c *Counts) *uint64 { return &c.Dup }},
	{Name: "invalid_urls", Help: "URLs that could not be normalized (signed raw)", Text: "invalid URLs", Field: func(c *Counts) *uint64 { return &c.Invalid }},
}

// Log decides requests and writes the records.
//
// There is one path for every state: requests are queued in batches, and a
// batch goes through an inflight.Window of the state's depth (InFlight: 0
// for a local state, which answers at once; n for Redis) when it is full
// or Options.MaxDelay after its first request, whichever comes first. Its
// records are written when its answers come back, in the order the
// requests came: at once at depth 0, else on a later Request or Flush
// (call Flush when the input pauses, and Close at the end).
//
// When a batch holds more than one request, a timer sends it MaxDelay
// after its first request even if no further request comes, so that no
// request waits longer than that to be decided; its records are then
// written from the timer's goroutine. The Log's methods may be called from
// one goroutine at a time; the Log locks against its own timer.
type Log struct {
	mu     sync.Mutex // guards all below against the timer
	dec    state.Decider
	signer *signature.Signer
	w      io.Writer
	format Format
	dryRun bool
	buf    []byte
	err    error
	closed bool

	win      *inflight.Window[*batch]
	free     []*batch
	cur      *batch
	maxDelay time.Duration
	timer    *time.Timer // sends a batch MaxDelay after its first request; nil for batches of one

	// OnError, when set, is called once, with the first error (a write
	// or a decision that failed): the moment to stop the capture. It may
	// be called from the timer's goroutine.
	OnError func(error)

	// Limit, when above 0, is the records to write before OnLimit is
	// called (once): the moment to stop reading packets. Records decided
	// meanwhile are still written (a URL recorded as seen is never left
	// out of the log), so a few more may follow.
	Limit   uint64
	OnLimit func()
	written uint64

	// Counts are the requests decided. Read them after Close, or with
	// CountsNow while the Log runs.
	Counts Counts
}

// Options configure how a Log batches. A nil *Options means the defaults.
type Options struct {
	// Batch is the most requests per batch; default 1000 against a
	// remote state, 1 (each request decided as it comes) against a local
	// one.
	Batch int
	// MaxDelay is the longest a request waits for its batch to be sent;
	// default 100 ms.
	MaxDelay time.Duration
}

// Live batching against a local state (LiveOptions): a Bloom-family layout
// takes a lock per batch, so a live capture decides in batches of up to
// LiveBatch requests, none held longer than LiveMaxDelay.
const (
	LiveBatch    = 128
	LiveMaxDelay = 2 * time.Millisecond
)

// LiveOptions are the options for a capture against d: small batches
// bounded by LiveMaxDelay for a local state, the defaults for a remote
// one.
func LiveOptions(d state.Decider) *Options {
	if d.InFlight() == 0 {
		return &Options{Batch: LiveBatch, MaxDelay: LiveMaxDelay}
	}
	return nil
}

// batch is requests copied out of the engine, waiting for their answers.
type batch struct {
	sigs    []signature.Signature
	seen    []bool
	reqs    []record
	data    []byte // methods and URLs
	started time.Time
}

type record struct {
	time     time.Time
	src, dst netip.AddrPort
	// Ends in data, back to back from the previous record's end:
	// method, URL, the Hello's ServerName, ALPN and Versions, the JA4,
	// the User-Agent.
	method, to, sni, alpn, versions, ja4, ua int
	proto                                    capture.Proto
	ech                                      bool
	tunnel                                   bool
	encap                                    capture.Encap
}

// New returns a Log deciding against d and writing to w. With dryRun it
// tests without setting. opts set the batches (see Options).
func New(d state.Decider, signer *signature.Signer, w io.Writer, format Format, dryRun bool, opts *Options) *Log {
	l := &Log{dec: d, signer: signer, w: w, format: format, dryRun: dryRun, buf: make([]byte, 0, 512)}
	depth := d.InFlight()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Batch <= 0 {
		o.Batch = 1000
		if depth == 0 {
			o.Batch = 1
		}
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 100 * time.Millisecond
	}
	l.maxDelay = o.MaxDelay
	l.win = inflight.NewWindow[*batch](context.Background(), d, depth, dryRun)
	for range max(depth, 1) + 1 { // the window full, and one being filled
		l.free = append(l.free, &batch{sigs: make([]signature.Signature, 0, o.Batch),
			seen: make([]bool, o.Batch), reqs: make([]record, 0, o.Batch), data: make([]byte, 0, 64*o.Batch)})
	}
	if o.Batch > 1 {
		l.timer = time.AfterFunc(time.Hour, l.expire)
		l.timer.Stop()
	}
	return l
}

// Err returns the first error; after it, nothing more is decided or written.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// CountsNow returns the counts so far, while the Log may be running.
func (l *Log) CountsNow() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Counts
}

func (l *Log) fail(err error) {
	if l.err == nil {
		l.err = err
		if l.OnError != nil {
			l.OnError(err)
		}
	}
}

// Request queues one request, sends its batch when it is full, and writes
// the records of the batches whose answers are back. It is the emit
// function for a capture.Engine.
func (l *Log) Request(r *capture.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil || l.closed {
		return
	}
	l.Counts.Requests++
	sig, ok := l.signer.Sign(r.URL)
	if !ok {
		l.Counts.Invalid++
	}
	l.queue(r, sig)
}

// queue adds a request to the current batch, sends the batch when it is
// full or old, and writes the batches whose answers are back.
func (l *Log) queue(r *capture.Request, sig signature.Signature) {
	b := l.cur
	if b == nil {
		b = l.free[len(l.free)-1]
		l.free = l.free[:len(l.free)-1]
		b.sigs, b.reqs, b.data = b.sigs[:0], b.reqs[:0], b.data[:0]
		l.cur = b
		if l.timer != nil {
			b.started = time.Now()
			l.timer.Reset(l.maxDelay)
		}
	}
	rec := record{time: r.Time, src: r.Src, dst: r.Dst, proto: r.Proto, ech: r.Hello.ECH, tunnel: r.Tunnel, encap: r.Encap}
	b.data = append(b.data, r.Method...)
	rec.method = len(b.data)
	b.data = append(b.data, r.URL...)
	rec.to = len(b.data)
	b.data = append(b.data, r.Hello.ServerName...)
	rec.sni = len(b.data)
	b.data = append(b.data, r.Hello.ALPN...)
	rec.alpn = len(b.data)
	b.data = append(b.data, r.Hello.Versions...)
	rec.versions = len(b.data)
	b.data = append(b.data, r.JA4...)
	rec.ja4 = len(b.data)
	b.data = append(b.data, r.UserAgent...)
	rec.ua = len(b.data)
	b.reqs = append(b.reqs, rec)
	b.sigs = append(b.sigs, sig)
	if len(b.sigs) == cap(b.sigs) || l.timer != nil && time.Since(b.started) >= l.maxDelay {
		l.send()
	}
	l.drain(false)
}

// expire sends the batch being filled once it is MaxDelay old: the timer's
// function. A timer that fires for a batch already sent finds none, or a
// younger one, whose time it sets again (it may have been stopped by
// the send this call waited for).
func (l *Log) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.err != nil || l.cur == nil {
		return
	}
	if age := time.Since(l.cur.started); age < l.maxDelay {
		l.timer.Reset(l.maxDelay - age)
		return
	}
	l.send()
	l.drain(false)
}

// send hands the current batch to the window, first writing the oldest
// batch in flight when the window is full.
func (l *Log) send() {
	b := l.cur
	if b == nil {
		return
	}
	l.cur = nil
	if l.timer != nil {
		l.timer.Stop()
	}
	if l.win.Full() {
		l.recv()
	}
	l.win.Send(b.sigs, b.seen[:len(b.sigs)], b)
}

// drain writes the batches whose answers are back; with all, it waits for
// every batch in flight.
func (l *Log) drain(all bool) {
	for l.win.Len() > 0 && (all || l.win.Ready()) {
		l.recv()
	}
}

func (l *Log) recv() {
	b, err := l.win.Recv()
	defer func() { l.free = append(l.free, b) }()
	if err != nil {
		l.fail(fmt.Errorf("audit: %w (%d requests of the batch not written)", err, len(b.reqs)))
	}
	if l.err != nil {
		return
	}
	var r capture.Request
	for i, rec := range b.reqs {
		off := 0
		if i > 0 {
			off = b.reqs[i-1].ua
		}
		r.Time, r.Src, r.Dst, r.Proto, r.Tunnel, r.Encap = rec.time, rec.src, rec.dst, rec.proto, rec.tunnel, rec.encap
		r.Method, r.URL = b.data[off:rec.method], b.data[rec.method:rec.to]
		r.Hello = tlshello.Hello{ServerName: b.data[rec.to:rec.sni], ALPN: b.data[rec.sni:rec.alpn],
			Versions: b.data[rec.alpn:rec.versions], ECH: rec.ech}
		r.JA4, r.UserAgent = b.data[rec.versions:rec.ja4], b.data[rec.ja4:rec.ua]
		l.write(&r, b.seen[i])
	}
}

// Flush sends the batch being filled and writes every batch in flight: for
// when the input pauses, and at the end.
func (l *Log) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flush()
}

// FlushWith flushes as Flush does, then calls out (the output's own
// flush; nil for none), both under the Log's lock: the timer may write
// to the output at any moment.
func (l *Log) FlushWith(out func() error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flush()
	if out != nil {
		_ = out() // a write that fails is reported on the next write
	}
}

func (l *Log) flush() {
	if l.err != nil || l.closed {
		return
	}
	l.send()
	l.drain(true)
}

// Close flushes and stops the Log's timer and goroutines.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.err
	}
	l.flush()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
	l.win.Close()
	return l.err
}

// write counts a decided request and writes its record. The text formats
// write the URL held to capture's text rule (what it forbids
// percent-encoded: a no-op for the records of a capture.Engine, which
// already are), JSON escapes the same characters: no record, whatever
// made it, starts a line, a column or a terminal escape.
func (l *Log) write(r *capture.Request, seen bool) {
	if seen {
		l.Counts.Dup++
	} else {
		l.Counts.New++
	}
	if l.err != nil {
		return
	}
	b := l.buf[:0]
	switch l.format {
	case NewURLs:
		if seen {
			return
		}
		b = append(capture.AppendTextSafe(b, r.URL), '\n')
	case All:
		if seen {
			b = append(b, "dup\t"...)
		} else {
			b = append(b, "new\t"...)
		}
		b = capture.AppendTextSafe(b, r.URL)
		if r.Tunnel {
			b = append(b, "\ttunnel"...)
		}
		b = append(b, '\n')
	case JSON:
		b = appendJSON(b, r, !seen)
	case NewJSON:
		if seen {
			return
		}
		b = appendJSON(b, r, true)
	case ECS:
		b = appendECS(b, r, !seen)
	case NewECS:
		if seen {
			return
		}
		b = appendECS(b, r, true)
	}
	l.buf = b
	if _, err := l.w.Write(b); err != nil {
		l.fail(err)
		return
	}
	if l.written++; l.written == l.Limit && l.OnLimit != nil {
		l.OnLimit()
	}
}

func appendJSON(b []byte, r *capture.Request, isNew bool) []byte {
	b = append(b, `{"ts":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","src":"`...)
	b = r.Src.AppendTo(b)
	b = append(b, `","dst":"`...)
	b = r.Dst.AppendTo(b)
	b = append(b, '"')
	if r.Proto != capture.ProtoHTTP { // names from a fixed table: nothing to escape
		b = append(b, `,"proto":"`...)
		b = append(b, r.Proto.String()...)
		b = append(b, '"')
	}
	if len(r.Method) > 0 {
		b = append(b, `,"method":`...)
		b = appendJSONString(b, r.Method)
	}
	b = append(b, `,"url":`...)
	b = appendJSONString(b, r.URL)
	if len(r.UserAgent) > 0 {
		b = append(b, `,"user_agent":`...)
		b = appendJSONString(b, r.UserAgent)
	}
	b = appendHello(b, &r.Hello)
	if len(r.JA4) > 0 { // letters, digits and '_': nothing to escape
		b = append(b, `,"ja4":"`...)
		b = append(b, r.JA4...)
		b = append(b, '"')
	}
	b = append(b, `,"community_id":"`...)
	b = communityid.Append(b, 0, transport(r.Proto), r.Src, r.Dst)
	b = append(b, '"')
	if !r.Encap.Plain() { // names from a fixed table: nothing to escape
		b = append(b, `,"encap":"`...)
		b = r.Encap.AppendTo(b)
		b = append(b, '"')
	}
	if r.Tunnel {
		b = append(b, `,"tunnel":true`...)
	}
	b = append(b, `,"new":`...)
	b = strconv.AppendBool(b, isNew)
	return append(b, "}\n"...)
}

// transport is the IP protocol a record's flow runs over: UDP for QUIC,
// TCP for the others.
func transport(p capture.Proto) uint8 {
	if p == capture.ProtoQUIC {
		return communityid.UDP
	}
	return communityid.TCP
}

// appendHello appends the fields of a ClientHello that it has: "sni",
// "alpn" (the protocol names), "versions" (their names, GREASE dropped)
// and "ech":true.
func appendHello(b []byte, h *tlshello.Hello) []byte {
	if len(h.ServerName) > 0 {
		b = append(b, `,"sni":`...)
		b = appendJSONString(b, h.ServerName)
	}
	if len(h.ALPN) > 0 {
		b = append(b, `,"alpn":[`...)
		for l, first := h.ALPN, true; ; first = false {
			name, rest, ok := tlshello.NextProtocol(l)
			if !ok {
				break
			}
			if !first {
				b = append(b, ',')
			}
			b = appendJSONString(b, name)
			l = rest
		}
		b = append(b, ']')
	}
	if len(h.Versions) > 0 {
		b = append(b, `,"versions":[`...)
		first := true
		for l := h.Versions; ; {
			v, rest, ok := tlshello.NextVersion(l)
			if !ok {
				break
			}
			l = rest
			if tlshello.IsGREASE(v) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, '"')
			b = tlshello.AppendVersion(b, v)
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	if h.ECH {
		b = append(b, `,"ech":true`...)
	}
	return b
}

// appendJSONString appends s as a JSON string; bytes that are not UTF-8
// become U+FFFD. The controls (C0, DEL, C1) and U+2028 and U+2029 are
// written as \u escapes, never raw: a line of JSON holds no character
// that starts a line or a terminal escape, whatever the packet carried.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r <= 0x9f, r == 0x2028, r == 0x2029:
			b = append(b, '\\', 'u', hex[r>>12], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// Package audit decides the HTTP requests found on the wire against the
// bitmap and writes the audit records: by default each URL the first time
// it is seen, or every request with its verdict, as text or JSON lines.
package audit

import (
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/urldedupd/urldedupd/pkg/bitcheck"
	"github.com/urldedupd/urldedupd/pkg/capture"
	"github.com/urldedupd/urldedupd/pkg/signature"
)

// Format selects what a Log writes.
type Format int

const (
	// NewURLs writes each new URL, one per line.
	NewURLs Format = iota
	// All writes every request as "new<TAB>URL" or "dup<TAB>URL".
	All
	// JSON writes every request as one JSON object per line, with the
	// fields ts, src, dst, method, url and new.
	JSON
	// NewJSON writes the requests whose URL is new, as JSON: the event log
	// of `urldedupd serve`.
	NewJSON
)

// Counts are the requests a Log has decided.
type Counts struct {
	Requests uint64
	New      uint64
	Dup      uint64
	Invalid  uint64 // URLs that could not be normalized (signed raw)
}

// Log decides requests and writes the records. It is not safe for
// concurrent use.
type Log struct {
	set    *bitcheck.Set
	signer *signature.Signer
	w      io.Writer
	format Format
	dryRun bool
	buf    []byte
	err    error

	Counts Counts
}

// New returns a Log writing to w. With dryRun it tests without setting.
func New(set *bitcheck.Set, signer *signature.Signer, w io.Writer, format Format, dryRun bool) *Log {
	return &Log{set: set, signer: signer, w: w, format: format, dryRun: dryRun, buf: make([]byte, 0, 512)}
}

// Err returns the first write error; after it, nothing more is written.
func (l *Log) Err() error { return l.err }

// Request decides one request and writes its record. It is the emit
// function for a capture.Engine.
func (l *Log) Request(r *capture.Request) {
	l.Counts.Requests++
	sig, ok := l.signer.Sign(r.URL)
	if !ok {
		l.Counts.Invalid++
	}
	var seen bool
	if l.dryRun {
		seen = l.set.Test(sig)
	} else {
		seen = l.set.TestAndSet(sig)
	}
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
		b = append(append(b, r.URL...), '\n')
	case All:
		if seen {
			b = append(b, "dup\t"...)
		} else {
			b = append(b, "new\t"...)
		}
		b = append(append(b, r.URL...), '\n')
	case JSON:
		b = appendJSON(b, r, !seen)
	case NewJSON:
		if seen {
			return
		}
		b = appendJSON(b, r, true)
	}
	l.buf = b
	_, l.err = l.w.Write(b)
}

func appendJSON(b []byte, r *capture.Request, isNew bool) []byte {
	b = append(b, `{"ts":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","src":"`...)
	b = r.Src.AppendTo(b)
	b = append(b, `","dst":"`...)
	b = r.Dst.AppendTo(b)
	b = append(b, `","method":`...)
	b = appendJSONString(b, r.Method)
	b = append(b, `,"url":`...)
	b = appendJSONString(b, r.URL)
	b = append(b, `,"new":`...)
	b = strconv.AppendBool(b, isNew)
	return append(b, "}\n"...)
}

// appendJSONString appends s as a JSON string; bytes that are not UTF-8
// become U+FFFD.
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// Package metrics writes metrics in the Prometheus text exposition format
// (version 0.0.4): counters, gauges and histograms by label, families
// computed at scrape time, the standard process_* and go_* metrics, and
// urldedupd_build_info.
//
// It replaces the Prometheus client library (client_golang, with procfs,
// protobuf and client_model) because Go links, and initialises at every
// start, every package a binary imports: the client's init cost the CLI's
// check of one URL about a millisecond of its start-up although only serve
// exports metrics (docs/dependencies.md). What urldedupd needs of the
// client is small: this package is it.
package metrics

import (
	"io"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Version is the build's version, for urldedupd_build_info; the command
// sets it.
var Version = "dev"

// Kinds of metric families, as the TYPE line names them.
const (
	Counter   = "counter"
	Gauge     = "gauge"
	Histogram = "histogram"
	Summary   = "summary"
)

// Registry is the metrics a scrape writes: collect functions, called in
// the order registered. It is safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	collect []func(*Writer)
}

// NewRegistry returns a registry with urldedupd_build_info and the
// standard process and Go metrics.
func NewRegistry() *Registry {
	r := &Registry{}
	r.Register(func(w *Writer) {
		w.Family("urldedupd_build_info", Gauge, "A 1 labelled with the build's version and the Go version it was built with.")
		w.Sample("urldedupd_build_info", 1, "version", Version, "goversion", runtime.Version())
	})
	r.Register(collectGo)
	r.Register(collectProcess)
	return r
}

// Register adds a collect function, called at every scrape.
func (r *Registry) Register(f func(*Writer)) {
	r.mu.Lock()
	r.collect = append(r.collect, f)
	r.mu.Unlock()
}

// WriteTo writes every metric in the text format.
func (r *Registry) WriteTo(out io.Writer) (int64, error) {
	r.mu.Lock()
	fs := slices.Clone(r.collect)
	r.mu.Unlock()
	w := &Writer{}
	for _, f := range fs {
		f(w)
	}
	n, err := out.Write(w.b)
	return int64(n), err
}

// ContentType is the text format's.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// ServeHTTP answers a scrape.
func (r *Registry) ServeHTTP(rw http.ResponseWriter, _ *http.Request) {
	rw.Header().Set("Content-Type", ContentType)
	r.WriteTo(rw)
}

// Writer builds an exposition: a family's HELP and TYPE lines, then its
// samples.
type Writer struct {
	b []byte
}

// Family starts the family name of kind typ.
func (w *Writer) Family(name, typ, help string) {
	w.b = append(w.b, "# HELP "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = appendEscaped(w.b, help, false)
	w.b = append(w.b, "\n# TYPE "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, typ...)
	w.b = append(w.b, '\n')
}

// Sample writes a sample of the family begun: name (the family's, or
// with a suffix as _bucket), v, and labels as name, value pairs, which it
// sorts by name (as the Prometheus client does).
func (w *Writer) Sample(name string, v float64, labels ...string) {
	for i := 2; i+1 < len(labels); i += 2 { // insertion sort of the pairs: a few at most
		for j := i; j >= 2 && labels[j] < labels[j-2]; j -= 2 {
			labels[j], labels[j-2] = labels[j-2], labels[j]
			labels[j+1], labels[j-1] = labels[j-1], labels[j+1]
		}
	}
	w.b = append(w.b, name...)
	if len(labels) > 0 {
		w.b = append(w.b, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, labels[i]...)
			w.b = append(w.b, `="`...)
			w.b = appendEscaped(w.b, labels[i+1], true)
			w.b = append(w.b, '"')
		}
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ' ')
	w.b = appendFloat(w.b, v)
	w.b = append(w.b, '\n')
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendEscaped escapes a help text (\ and newline) or a label value (and ").
func appendEscaped(b []byte, s string, quote bool) []byte {
	if !strings.ContainsAny(s, "\\\n\"") {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

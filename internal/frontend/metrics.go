package frontend

import (
	"time"

	"github.com/urldedupd/urldedupd/internal/metrics"
)

// Metrics are a front end's request metrics, named after it:
//
//	urldedupd_<name>_requests_total{<op>,<status>}
//	urldedupd_<name>_request_duration_seconds{<op>}
//	urldedupd_<name>_urls_total{result}         (new, dup)
//	urldedupd_<name>_connections                (of its ConnLimit)
//	urldedupd_<name>_connection_waits_total
//	urldedupd_<name>_inflight_bytes             (of its Budget)
//
// The label names of the operation and status are the front end's own
// ("endpoint" and "code" for HTTP, "command" and "status" for RESP).
// Observe is its Observer. The HTTP API's metrics have these names and
// are defined, for now, with the daemon's (package daemon, metrics.go).
type Metrics struct {
	prefix, what string
	requests     *metrics.CounterVec
	latency      *metrics.HistogramVec
	urls         *metrics.CounterVec
	limit        *ConnLimit
	budget       *Budget
}

// NewMetrics returns the metrics of the front end name (what Name
// returns), its operations labelled op and their outcomes status. limit
// and budget may be nil.
func NewMetrics(name, what, op, status string, limit *ConnLimit, budget *Budget) *Metrics {
	p := "urldedupd_" + name + "_"
	return &Metrics{
		prefix:   p,
		what:     what,
		requests: metrics.NewCounterVec(p+"requests_total", what+" requests by "+op+" and "+status+".", op, status),
		latency: metrics.NewHistogramVec(p+"request_duration_seconds", what+" request latency by "+op+".",
			metrics.ExponentialBuckets(0.00005, 4, 10), op),
		urls:   metrics.NewCounterVec(p+"urls_total", "URLs decided through the "+what+", by result (new, dup).", "result"),
		limit:  limit,
		budget: budget,
	}
}

// Register registers the metrics with reg.
func (m *Metrics) Register(reg *metrics.Registry) {
	reg.Register(m.requests.Collect)
	reg.Register(m.latency.Collect)
	reg.Register(m.urls.Collect)
	if m.limit != nil {
		reg.Register(func(w *metrics.Writer) {
			w.Family(m.prefix+"connections", metrics.Gauge, m.what+" connections open, out of the configured limit.")
			w.Sample(m.prefix+"connections", float64(m.limit.InUse()))
			w.Family(m.prefix+"connection_waits_total", metrics.Counter, "Times every allowed "+m.what+" connection was open, so that a new one waited in the kernel's listen backlog.")
			w.Sample(m.prefix+"connection_waits_total", float64(m.limit.Waits()))
		})
	}
	if m.budget != nil {
		reg.Register(func(w *metrics.Writer) {
			w.Family(m.prefix+"inflight_bytes", metrics.Gauge, "Bytes "+m.what+" requests hold, out of the configured limit.")
			w.Sample(m.prefix+"inflight_bytes", float64(m.budget.Used()))
		})
	}
}

// Observe records a request: the front end's Observer.
func (m *Metrics) Observe(op, status string, d time.Duration, nNew, nDup int) {
	m.requests.Add(1, op, status)
	m.latency.Observe(d.Seconds(), op)
	if nNew > 0 {
		m.urls.Add(uint64(nNew), "new")
	}
	if nDup > 0 {
		m.urls.Add(uint64(nDup), "dup")
	}
}

var _ Observer = (*Metrics)(nil).Observe

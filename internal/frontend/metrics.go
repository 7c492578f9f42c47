package frontend

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	urls     *prometheus.CounterVec
	gauges   []prometheus.Collector
}

// NewMetrics returns the metrics of the front end name (what Name
// returns), its operations labelled op and their outcomes status. limit
// and budget may be nil.
func NewMetrics(name, what, op, status string, limit *ConnLimit, budget *Budget) *Metrics {
	p := "urldedupd_" + name + "_"
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: p + "requests_total", Help: what + " requests by " + op + " and " + status + ".",
		}, []string{op, status}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: p + "request_duration_seconds", Help: what + " request latency by " + op + ".",
			Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10),
		}, []string{op}),
		urls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: p + "urls_total", Help: "URLs decided through the " + what + ", by result (new, dup).",
		}, []string{"result"}),
	}
	if limit != nil {
		m.gauges = append(m.gauges, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: p + "connections", Help: what + " connections open, out of the configured limit.",
		}, func() float64 { return float64(limit.InUse()) }), prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: p + "connection_waits_total", Help: "Times every allowed " + what + " connection was open, so that a new one waited in the kernel's listen backlog.",
		}, func() float64 { return float64(limit.Waits()) }))
	}
	if budget != nil {
		m.gauges = append(m.gauges, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: p + "inflight_bytes", Help: "Bytes " + what + " requests hold, out of the configured limit.",
		}, func() float64 { return float64(budget.Used()) }))
	}
	return m
}

// Register registers the metrics with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	for _, c := range append([]prometheus.Collector{m.requests, m.latency, m.urls}, m.gauges...) {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Observe records a request: the front end's Observer.
func (m *Metrics) Observe(op, status string, d time.Duration, nNew, nDup int) {
	m.requests.WithLabelValues(op, status).Inc()
	m.latency.WithLabelValues(op).Observe(d.Seconds())
	if nNew > 0 {
		m.urls.WithLabelValues("new").Add(float64(nNew))
	}
	if nDup > 0 {
		m.urls.WithLabelValues("dup").Add(float64(nDup))
	}
}

var _ Observer = (*Metrics)(nil).Observe

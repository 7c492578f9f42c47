package frontend_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/urldedupd/urldedupd/internal/frontend"
)

// A front end's metrics carry its name and its labels, and count what it
// observes.
func TestMetrics(t *testing.T) {
	limit := frontend.NewConnLimit(4)
	budget := frontend.NewBudget(1000, 4)
	m := frontend.NewMetrics("resp", "RESP", "command", "status", limit, budget)
	reg := prometheus.NewRegistry()
	if err := m.Register(reg); err != nil {
		t.Fatal(err)
	}
	m.Observe("GETBIT", "ok", time.Millisecond, 0, 1)
	m.Observe("SETNX", "ok", time.Millisecond, 3, 0)
	budget.Take(0, 40)
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			key := mf.GetName()
			for _, lp := range mt.GetLabel() {
				key += " " + lp.GetName() + "=" + lp.GetValue()
			}
			switch {
			case mt.Counter != nil:
				got[key] = mt.GetCounter().GetValue()
			case mt.Gauge != nil:
				got[key] = mt.GetGauge().GetValue()
			case mt.Histogram != nil:
				got[key] = float64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	want := map[string]float64{
		"urldedupd_resp_requests_total command=GETBIT status=ok": 1,
		"urldedupd_resp_requests_total command=SETNX status=ok":  1,
		"urldedupd_resp_request_duration_seconds command=GETBIT": 1,
		"urldedupd_resp_urls_total result=dup":                   1,
		"urldedupd_resp_urls_total result=new":                   3,
		"urldedupd_resp_inflight_bytes":                          40,
		"urldedupd_resp_connections":                             0,
		"urldedupd_resp_connection_waits_total":                  0,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}

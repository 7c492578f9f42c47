package frontend_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/metrics"
)

// A front end's metrics carry its name and its labels, and count what it
// observes; the exposition parses as Prometheus's text format.
func TestMetrics(t *testing.T) {
	limit := frontend.NewConnLimit(4)
	budget := frontend.NewBudget(1000, 4)
	m := frontend.NewMetrics("resp", "RESP", "command", "status", limit, budget)
	reg := metrics.NewRegistry()
	m.Register(reg)
	m.Observe("GETBIT", "ok", time.Millisecond, 0, 1)
	m.Observe("SETNX", "ok", time.Millisecond, 3, 0)
	budget.Take(0, 40)
	var out bytes.Buffer
	if _, err := reg.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, out.String())
	}
	got := map[string]float64{}
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

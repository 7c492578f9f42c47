package daemon

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Every metric the Grafana dashboard queries is one the daemon exports.
func TestDashboardMetricsExist(t *testing.T) {
	m := newMetrics(&Daemon{})
	ch := make(chan *prometheus.Desc, 64)
	for _, c := range []prometheus.Collector{m.apiRequests, m.apiLatency, m.apiURLs, &collector{}} {
		c.Describe(ch)
	}
	close(ch)
	exported := map[string]bool{}
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		if mm := name.FindStringSubmatch(d.String()); mm != nil {
			exported[mm[1]] = true
		}
	}
	data, err := os.ReadFile("../../scripts/deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	used := regexp.MustCompile(`urldedupd_[a-z_]+`).FindAllString(string(data), -1)
	if len(used) < 10 {
		t.Fatalf("only %d metric references in the dashboard", len(used))
	}
	for _, u := range used {
		base := strings.TrimSuffix(u, "_bucket")
		if !exported[base] {
			t.Errorf("dashboard uses %s, which the daemon does not export (it exports %v)", u, exported)
		}
	}
}

package metrics

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// A registry's exposition parses and passes promtool's lint, and says
// what was counted: counters by label, cumulative histogram buckets, the
// escapes of help and label values, build_info and the standard metrics.
func TestExposition(t *testing.T) {
	Version = "v1.2.3"
	r := NewRegistry()
	c := NewCounterVec("demo_events_total", "Events by kind, with a \\ and a\nnewline.", "kind", "code")
	h := NewHistogramVec("demo_duration_seconds", "Durations.", ExponentialBuckets(0.001, 10, 3), "op")
	r.Register(c.Collect)
	r.Register(h.Collect)
	c.Add(2, `a "quoted" \ value`, "200")
	c.Add(3, "b", "404")
	c.Add(1, "b", "404")
	for _, v := range []float64{0.0005, 0.001, 0.05, 5} {
		h.Observe(v, "get")
	}
	var b bytes.Buffer
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# HELP demo_events_total Events by kind, with a \\\\ and a\\nnewline.\n",
		`demo_events_total{code="200",kind="a \"quoted\" \\ value"} 2` + "\n",
		`demo_events_total{code="404",kind="b"} 4` + "\n",
		`demo_duration_seconds_bucket{le="0.001",op="get"} 2` + "\n",
		`demo_duration_seconds_bucket{le="0.01",op="get"} 2` + "\n",
		`demo_duration_seconds_bucket{le="0.1",op="get"} 3` + "\n",
		`demo_duration_seconds_bucket{le="+Inf",op="get"} 4` + "\n",
		`demo_duration_seconds_count{op="get"} 4` + "\n",
		`urldedupd_build_info{goversion="go`, `",version="v1.2.3"} 1` + "\n",
		"# TYPE process_cpu_seconds_total counter\n", "# TYPE go_gc_duration_seconds summary\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found (Debian package prometheus; scripts/install-deps.sh installs it)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(out)
	res, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err != nil || len(res) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\n--- exposition:\n%s", err, res, out)
	}
}

// Counting is what the API does per request: no allocation once a series
// exists.
func TestAddObserveAllocs(t *testing.T) {
	c := NewCounterVec("x_total", "x", "a", "b")
	h := NewHistogramVec("y_seconds", "y", ExponentialBuckets(0.001, 10, 3), "op")
	c.Add(1, "p", "q")
	h.Observe(1, "get")
	if n := testing.AllocsPerRun(100, func() { c.Add(1, "p", "q"); h.Observe(0.01, "get") }); n != 0 {
		t.Errorf("%v allocations per Add and Observe", n)
	}
}

package daemon

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/metrics"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/statetest"
)

// scrape returns a daemon's exposition with one source, eth0, whose every
// counter has its own value (1000, 1001, ...), and the figures it was given.
func scrape(t *testing.T) (string, *figures) {
	t.Helper()
	dir, events := stateAndLog(t)
	d, err := New(dir, Config{Socket: filepath.Join(t.TempDir(), "api.sock"), Events: events})
	if err != nil {
		t.Fatal(err)
	}
	src := &source{cfg: SourceConfig{Iface: "eth0"}}
	f := &figures{}
	fc := figureCounters()
	for i := range fc {
		*fc[i].Field(f) = uint64(1000 + i)
	}
	src.stats, src.counts, src.undecided = f.stats, f.counts, f.undecided
	src.up.Store(true)
	d.sources = append(d.sources, src)
	d.metrics.observe("decide", 200, 3e5, 2, 1)
	var b bytes.Buffer
	if _, err := d.metrics.reg.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String(), f
}

// The exposition is valid text format, as Prometheus' own parser and
// linter (promtool check metrics) read it: names, types, help, labels,
// histograms and the standard process and Go metrics.
func TestMetricsPromtool(t *testing.T) {
	out, _ := scrape(t)
	promtoolCheck(t, out)
	for _, name := range []string{"urldedupd_build_info", "process_cpu_seconds_total", "process_resident_memory_bytes",
		"process_virtual_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds",
		"go_goroutines", "go_threads", "go_info", "go_memstats_alloc_bytes", "go_gc_duration_seconds",
		"urldedupd_api_request_duration_seconds_bucket"} {
		if !regexp.MustCompile(`(?m)^` + name + `[{ ]`).MatchString(out) {
			t.Errorf("no %s in the exposition", name)
		}
	}
}

// Every counter of the sources' figures is exactly one series of the
// exposition, with its own value: a counter added to a stats type's table
// cannot be forgotten in the metrics.
func TestMetricsEveryCounterOnce(t *testing.T) {
	out, f := scrape(t)
	seen := 0
	fc := figureCounters()
	for i := range fc {
		d := &fc[i]
		v := strconv.FormatUint(d.Value(f), 10)
		var series string
		if ln, lv := d.LabelPair(); ln != "" { // labels sorted by name: kind, proto, reason < source
			series = `urldedupd_capture_` + d.MetricName() + `_total{` + ln + `="` + lv + `",source="eth0"} ` + v + "\n"
		} else {
			series = `urldedupd_capture_` + d.MetricName() + `_total{source="eth0"} ` + v + "\n"
		}
		n := strings.Count(out, series)
		if d.In(counter.Metrics) {
			seen++
			if n != 1 {
				t.Errorf("%s: %q appears %d times, want once", d.Name, series, n)
			}
		} else if strings.Contains(out, " "+v+"\n") {
			t.Errorf("%s is not a metric, but its value %s is in the exposition", d.Name, v)
		}
	}
	if got := strings.Count(out, "\nurldedupd_capture_") - strings.Count(out, "\nurldedupd_capture_undecoded_frames_total{"); got != seen {
		t.Errorf("%d series of the sources' counters, want %d", got, seen)
	}
}

// A scrape reads the sources' figures through the counters' tables, which
// are made at start-up: the API's per-request observe allocates nothing.
func TestObserveAllocs(t *testing.T) {
	m := newMetrics(&Daemon{})
	m.observe("decide", 200, 1e5, 1, 1)
	if n := testing.AllocsPerRun(100, func() { m.observe("decide", 200, 1e5, 3, 1) }); n != 0 {
		t.Errorf("observe allocates %v times per request", n)
	}
}

// BenchmarkScrape measures a scrape of the sources' counters (state and
// runtime metrics aside): it runs at scrape time, never per packet.
func BenchmarkScrapeSources(b *testing.B) {
	d := &Daemon{sources: []*source{{cfg: SourceConfig{Iface: "eth0"}}, {cfg: SourceConfig{Iface: "eth1"}}}}
	c := &collector{d: d}
	for b.Loop() {
		c.collectSources(&metrics.Writer{})
	}
}

// A windowed keyed state exports its generation and each age's URLs and
// fill, valid for promtool.
func TestMetricsWindow(t *testing.T) {
	st := statetest.Memory(t, "keyed-window")
	signer := st.Signer()
	var sigs []signature.Signature
	for _, u := range []string{"http://a.example/", "http://b.example/", "http://c.example/"} {
		s, _ := signer.Sign([]byte(u))
		sigs = append(sigs, s)
	}
	if err := st.Decide(context.Background(), sigs, make([]bool, len(sigs)), false); err != nil {
		t.Fatal(err)
	}
	d, err := New(st, Config{Socket: filepath.Join(t.TempDir(), "api.sock")})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := d.metrics.reg.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"\nurldedupd_window_age_urls{age=\"0\"} 3\n", "\nurldedupd_window_generation ", "\nurldedupd_window_age_fill_ratio{age=\"0\"} "} {
		if !strings.Contains(out, want) {
			t.Errorf("the exposition lacks %q", want)
		}
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(out)
		if res, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(res), "urldedupd_bits_set") {
			t.Errorf("promtool: %v: %s", err, res)
		}
	} else {
		t.Fatal("promtool not found (scripts/install-deps.sh installs it)")
	}
}

// promtoolCheck fails the test unless promtool check metrics accepts the
// exposition out. urldedupd_bits_set counts bits set, not a size: the
// linter's "use base unit bytes" does not apply, and the name is kept for
// the dashboards that read it.
func promtoolCheck(t *testing.T, out string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found (Debian package prometheus; scripts/install-deps.sh installs it)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(out)
	res, err := cmd.CombinedOutput()
	// Exit status 3 is lint problems alone (1: the text did not parse).
	var ee *exec.ExitError
	lint := strings.TrimSpace(string(res))
	if errors.As(err, &ee) && ee.ExitCode() == 3 && lint == `urldedupd_bits_set use base unit "bytes" instead of "bits"` {
		err, lint = nil, ""
	}
	if err != nil || lint != "" {
		t.Errorf("promtool check metrics: %v\n%s\n--- exposition:\n%s", err, res, out)
	}
}

package daemon

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/urldedupd/urldedupd/internal/api"
	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/counter"
	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/metrics"
	"github.com/urldedupd/urldedupd/internal/state"
)

// daemonMetrics holds the daemon's Prometheus metrics: API counters and
// latency updated as requests are served, and collectors that read the
// sources' published figures and the state's fill at scrape time.
type daemonMetrics struct {
	reg         *metrics.Registry
	apiRequests *metrics.CounterVec
	apiLatency  *metrics.HistogramVec
	apiURLs     *metrics.CounterVec
}

func newMetrics(d *Daemon) *daemonMetrics {
	m := &daemonMetrics{
		reg:         metrics.NewRegistry(),
		apiRequests: metrics.NewCounterVec("urldedupd_api_requests_total", "API requests by endpoint and status code.", "endpoint", "code"),
		apiLatency: metrics.NewHistogramVec("urldedupd_api_request_duration_seconds", "API request latency by endpoint.",
			metrics.ExponentialBuckets(0.00005, 4, 10), "endpoint"),
		apiURLs: metrics.NewCounterVec("urldedupd_api_urls_total", "URLs decided through the API, by result (new, dup).", "result"),
	}
	m.reg.Register(m.apiRequests.Collect)
	m.reg.Register(m.apiLatency.Collect)
	m.reg.Register(m.apiURLs.Collect)
	c := &collector{d: d}
	m.reg.Register(c.collectSources)
	m.reg.Register(c.collectEventLog)
	m.reg.Register(c.collectState)
	m.reg.Register(c.collectFlush)
	return m
}

func (m *daemonMetrics) observe(endpoint string, code int, d time.Duration, nNew, nDup int) {
	m.apiRequests.Add(1, endpoint, codeLabel(code))
	m.apiLatency.Observe(d.Seconds(), endpoint)
	if nNew > 0 {
		m.apiURLs.Add(uint64(nNew), "new")
	}
	if nDup > 0 {
		m.apiURLs.Add(uint64(nDup), "dup")
	}
}

// watchAPI reports the bytes the API's requests hold.
func (m *daemonMetrics) watchAPI(s *api.Server) {
	m.reg.Register(func(w *metrics.Writer) {
		w.Family("urldedupd_api_inflight_bytes", metrics.Gauge, "Bytes of request bodies (and their URLs) the API holds, out of the configured limit (max-inflight-bytes).")
		w.Sample("urldedupd_api_inflight_bytes", float64(s.InflightBytes()))
	})
}

// watchConns reports the API connections open and the accepts that
// waited at the cap.
func (m *daemonMetrics) watchConns(cl *frontend.ConnLimit) {
	m.reg.Register(func(w *metrics.Writer) {
		w.Family("urldedupd_api_connections", metrics.Gauge, "API connections open, out of the configured limit (max-conns).")
		w.Sample("urldedupd_api_connections", float64(cl.InUse()))
		w.Family("urldedupd_api_connection_waits_total", metrics.Counter, "Times every allowed API connection (max-conns) was open, so that a new one waited in the kernel's listen backlog.")
		w.Sample("urldedupd_api_connection_waits_total", float64(cl.Waits()))
	})
}

func codeLabel(code int) string {
	switch code {
	case 200:
		return "200"
	case 400:
		return "400"
	case 401:
		return "401"
	case 405:
		return "405"
	case 408:
		return "408"
	case 413:
		return "413"
	case 415:
		return "415"
	case 503:
		return "503"
	}
	return "other"
}

// figures are what a source publishes: its engines' counters, its
// recorder's, and the requests the backend could not decide.
type figures struct {
	stats     capture.Stats
	counts    audit.Counts
	undecided uint64
}

// figureCounters describe figures: capture.StatsCounters, then
// audit.CountsCounters, then undecided. Made at the first scrape, not at
// the start of every command.
var figureCounters = sync.OnceValue(func() counter.Table[figures] {
	return append(append(
		counter.Nest(capture.StatsCounters(), "", func(f *figures) *capture.Stats { return &f.stats }),
		counter.Nest(audit.CountsCounters, "", func(f *figures) *audit.Counts { return &f.counts })...),
		counter.Desc[figures]{Name: "undecided", Help: "Requests the backend could not decide (their URLs are not recorded); capture went on", Field: func(f *figures) *uint64 { return &f.undecided }})
})

// family is one metric of the sources' counters: urldedupd_capture_STEM_total
// with a source label, and the counters that are its series.
type family struct {
	name, help, label string
	series            []*counter.Desc[figures]
}

// families groups figureCounters by metric, in the order they come first;
// made once, at the first scrape.
var families = sync.OnceValue(func() []*family {
	var fs []*family
	byName := map[string]*family{}
	fc := figureCounters()
	for i := range fc {
		d := &fc[i]
		if !d.In(counter.Metrics) {
			continue
		}
		name := "urldedupd_capture_" + d.MetricName() + "_total"
		f := byName[name]
		if f == nil {
			label, _ := d.LabelPair()
			help := d.MetricHelp
			if help == "" {
				help = d.Help
			}
			f = &family{name: name, help: help + ".", label: label}
			byName[name] = f
			fs = append(fs, f)
		}
		f.series = append(f.series, d)
	}
	return fs
})

// collector reports the sources' figures and the state's fill. The fill
// reads all 512 MiB, so it is counted at most every 10 seconds.
type collector struct {
	d        *Daemon
	mu       sync.Mutex
	rep      state.Report
	fillTime time.Time
}

// sourceFigures are an interface's figures: its workers' added up (the
// kernel's drops too: each worker has its own socket), up while every
// worker runs.
type sourceFigures struct {
	iface string
	figures
	up bool
}

func (c *collector) sourceFigures() []sourceFigures {
	var out []sourceFigures
	for _, s := range c.d.sources {
		var f figures
		f.stats, f.counts, f.undecided = s.snapshot()
		f.stats.Panics += s.panics.Load()
		if s.worker == 0 {
			out = append(out, sourceFigures{iface: s.cfg.Iface, figures: f, up: s.up.Load()})
			continue
		}
		g := &out[len(out)-1] // the interface's first worker came just before
		drops := g.stats.KernelDrops + f.stats.KernelDrops
		g.stats = addStats(g.stats, f.stats)
		g.stats.KernelDrops = drops
		audit.CountsCounters.Add(&g.counts, &f.counts)
		g.undecided += f.undecided
		g.up = g.up && s.up.Load()
	}
	return out
}

func (c *collector) collectSources(w *metrics.Writer) {
	srcs := c.sourceFigures()
	figs := make([]figures, len(srcs))
	for i := range srcs {
		figs[i] = srcs[i].figures
	}
	for _, fam := range families() {
		w.Family(fam.name, metrics.Counter, fam.help)
		for i, s := range srcs {
			for _, d := range fam.series {
				if fam.label == "" {
					w.Sample(fam.name, float64(d.Value(&figs[i])), "source", s.iface)
				} else {
					_, v := d.LabelPair()
					w.Sample(fam.name, float64(d.Value(&figs[i])), "source", s.iface, fam.label, v)
				}
			}
		}
	}
	w.Family("urldedupd_capture_undecoded_frames_total", metrics.Counter,
		"Frames not decoded, by reason: link type, EtherType or loopback family not read (reason=\"linktype:127\", \"ethertype:0x8864\"; \"further\" past 16 reasons).")
	for i, s := range srcs {
		st := &figs[i].stats
		for _, r := range st.Reasons.Counts() {
			if r.Undecoded() {
				w.Sample("urldedupd_capture_undecoded_frames_total", float64(r.Frames), "source", s.iface, "reason", r.Label(), "name", r.Reason.String())
			}
		}
		if n := st.Reasons.LumpedUndecoded; n > 0 {
			w.Sample("urldedupd_capture_undecoded_frames_total", float64(n), "source", s.iface, "reason", "further", "name", "further link types or protocols")
		}
	}
	w.Family("urldedupd_source_up", metrics.Gauge, "1 while the capture source runs (every worker of it), 0 after one failed.")
	for _, s := range srcs {
		w.Sample("urldedupd_source_up", b2f(s.up), "source", s.iface)
	}
}

func (c *collector) collectEventLog(w *metrics.Writer) {
	ev := c.d.cfg.Events
	if ev == nil {
		return
	}
	st := ev.Stats()
	for i := range EventLogStatsCounters {
		d := &EventLogStatsCounters[i]
		name := "urldedupd_event_log_" + d.Name + "_total"
		w.Family(name, metrics.Counter, d.Help+".")
		w.Sample(name, float64(d.Value(&st)))
	}
	w.Family("urldedupd_event_log_stale", metrics.Gauge, "1 while the last reopen failed: events go to the file the path had before.")
	w.Sample("urldedupd_event_log_stale", b2f(st.Stale))
}

func (c *collector) collectState(w *metrics.Writer) {
	c.mu.Lock()
	if time.Since(c.fillTime) > 10*time.Second {
		if r, err := c.d.state.Report(context.Background()); err == nil {
			c.rep, c.fillTime = r, time.Now()
		}
	}
	r := c.rep
	c.mu.Unlock()
	gauge := func(name, help string, v float64) {
		w.Family(name, metrics.Gauge, help)
		w.Sample(name, v)
	}
	gauge("urldedupd_fill_ratio", "Fraction of the state used: bits set (bitmap layout) or slots occupied (keyed layout).", r.FillRatio)
	gauge("urldedupd_false_duplicate_chance", "Chance that the next new URL is reported a duplicate, from the measured fill by the layout's formula.", r.FalseDupChance)
	const distinct = "Distinct URLs recorded: by linear counting (bitmap), slots occupied (keyed)."
	if r.EstimatedDistinct != nil {
		gauge("urldedupd_estimated_distinct_urls", distinct, *r.EstimatedDistinct)
	} else if r.Layout != "" {
		gauge("urldedupd_estimated_distinct_urls", distinct, math.Inf(1))
	}
	if r.BitsSet != nil {
		gauge("urldedupd_bits_set", "Bits set in the bitmap (bitmap layout only).", float64(*r.BitsSet))
	}
	if r.CapacityUsed != nil {
		gauge("urldedupd_capacity_used_ratio", "Distinct URLs recorded over the state's capacity (planned at init, or the keyed layout's own); absent for an unplanned bitmap.", *r.CapacityUsed)
	}
	if wr := r.Window; wr != nil {
		gauge("urldedupd_window_generation", "Windowed layouts: the current generation, counted from the state's epoch.", float64(wr.Generation))
		w.Family("urldedupd_window_age_fill_ratio", metrics.Gauge, "Windowed layouts: fill of each live generation by age (0 the current): its URLs over the slots (keyed-window) or its bits set over 2^32 (bitmap-window).")
		for _, a := range wr.Ages {
			w.Sample("urldedupd_window_age_fill_ratio", a.Fill, "age", strconv.Itoa(a.Age))
		}
		if len(wr.Ages) > 0 && wr.Ages[0].URLs != nil {
			w.Family("urldedupd_window_age_urls", metrics.Gauge, "Windowed keyed layout: URLs held in each live generation, by age (0 the current).")
			for _, a := range wr.Ages {
				w.Sample("urldedupd_window_age_urls", float64(*a.URLs), "age", strconv.Itoa(a.Age))
			}
		}
	}
	if r.NotStoredChance != nil {
		gauge("urldedupd_not_stored_chance", "Keyed layout: chance that the next new URL finds both its buckets full and is answered new without being stored.", *r.NotStoredChance)
		w.Family("urldedupd_not_stored_total", metrics.Counter, "Keyed layout: URLs this process answered new without storing them (both buckets full).")
		w.Sample("urldedupd_not_stored_total", float64(c.d.state.NotStored()))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

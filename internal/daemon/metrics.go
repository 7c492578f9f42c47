package daemon

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/urldedupd/urldedupd/internal/api"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/frontend"
	"github.com/urldedupd/urldedupd/internal/state"
)

// metrics holds the daemon's Prometheus metrics: API counters and latency
// updated as requests are served, and a collector that reads the sources'
// published figures and the state's fill at scrape time.
type metrics struct {
	reg         *prometheus.Registry
	apiRequests *prometheus.CounterVec
	apiLatency  *prometheus.HistogramVec
	apiURLs     *prometheus.CounterVec
}

func newMetrics(d *Daemon) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		apiRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "urldedupd_api_requests_total", Help: "API requests by endpoint and status code.",
		}, []string{"endpoint", "code"}),
		apiLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "urldedupd_api_request_duration_seconds", Help: "API request latency by endpoint.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10),
		}, []string{"endpoint"}),
		apiURLs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "urldedupd_api_urls_total", Help: "URLs decided through the API, by result (new, dup).",
		}, []string{"result"}),
	}
	m.reg.MustRegister(m.apiRequests, m.apiLatency, m.apiURLs, &collector{d: d})
	return m
}

func (m *metrics) observe(endpoint string, code int, d time.Duration, nNew, nDup int) {
	m.apiRequests.WithLabelValues(endpoint, codeLabel(code)).Inc()
	m.apiLatency.WithLabelValues(endpoint).Observe(d.Seconds())
	if nNew > 0 {
		m.apiURLs.WithLabelValues("new").Add(float64(nNew))
	}
	if nDup > 0 {
		m.apiURLs.WithLabelValues("dup").Add(float64(nDup))
	}
}

// watchAPI reports the bytes the API's requests hold.
func (m *metrics) watchAPI(s *api.Server) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "urldedupd_api_inflight_bytes", Help: "Bytes of request bodies (and their URLs) the API holds, out of the configured limit (max-inflight-bytes).",
	}, func() float64 { return float64(s.InflightBytes()) }))
}

// watchConns reports the API connections open and the accepts that
// waited at the cap.
func (m *metrics) watchConns(cl *frontend.ConnLimit) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "urldedupd_api_connections", Help: "API connections open, out of the configured limit (max-conns).",
	}, func() float64 { return float64(cl.InUse()) }), prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "urldedupd_api_connection_waits_total", Help: "Times every allowed API connection (max-conns) was open, so that a new one waited in the kernel's listen backlog.",
	}, func() float64 { return float64(cl.Waits()) }))
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

var (
	descPackets   = srcDesc("packets_total", "Frames captured.")
	descBytes     = srcDesc("bytes_total", "Bytes captured.")
	descRequests  = srcDesc("requests_total", "HTTP requests found.")
	descNew       = srcDesc("new_total", "Requests whose URL was new.")
	descDup       = srcDesc("duplicates_total", "Requests whose URL was seen before.")
	descParseErr  = srcDesc("parse_errors_total", "HTTP parse errors (junk runs, bad framing).")
	descGaps      = srcDesc("reassembly_gaps_total", "Holes in TCP streams given up on.")
	descDrops     = srcDesc("kernel_drops_total", "Frames the kernel dropped (ring full).")
	descPanics    = srcDesc("panics_total", "Panics recovered from while reading or handling a frame (the connection, or all of the source's, dropped); capture went on.")
	descOverflow  = srcDesc("buffer_overflows_total", "Times a reassembly buffer cap forced held bytes to be dropped.")
	descDenied    = srcDesc("segments_denied_total", "Segments of new connections ignored because the flow cap was reached.")
	descEvicted   = srcDesc("flows_evicted_total", "Connection directions made room for at the flow cap: without data (a SYN flood), else quiet for a second.")
	descOther     = srcDesc("other_frames_total", "Frames read that carry no TCP (ARP, ICMP, UDP ...): not an error.")
	descFragments = srcDesc("ip_fragments_total", "IPv4 and IPv6 fragments read.")
	descDatagrams = srcDesc("ip_datagrams_reassembled_total", "IP datagrams reassembled from fragments.")
	descFragDrop  = prometheus.NewDesc("urldedupd_capture_ip_datagrams_dropped_total", "IP datagrams in reassembly dropped, by reason: timeout (not complete in time), cap (the oldest at the cap on datagrams or bytes held), invalid (inconsistent fragments or too long).", []string{"source", "reason"}, nil)
	descMalformed = srcDesc("malformed_frames_total", "Frames that could not be parsed (truncated or inconsistent headers).")
	descUndecoded = prometheus.NewDesc("urldedupd_capture_undecoded_frames_total",
		"Frames not decoded, by reason: link type, EtherType or loopback family not read (reason=\"linktype:127\", \"ethertype:0x8864\"; \"further\" past 16 reasons).",
		[]string{"source", "reason", "name"}, nil)
	descLate    = srcDesc("late_segments_total", "Segments of connection directions that had ended (retransmissions after FIN or RST, a SYN again), dropped.")
	descNonHTTP = prometheus.NewDesc("urldedupd_capture_non_http_streams_total",
		"Client streams recognised as another protocol (tls, ssh, smtp, imap, pop3, ftp, ftp/pop3, tunnel, http2) and skipped.",
		[]string{"source", "kind"}, nil)
	descRecords = prometheus.NewDesc("urldedupd_capture_records_total",
		"Records found, by protocol: http (HTTP/1.x requests), tls (ClientHellos over TCP), quic (ClientHellos in QUIC Initials), h2c (cleartext HTTP/2 requests); only the protocols selected (proto).",
		[]string{"source", "proto"}, nil)
	descTLSNoSNI    = srcDesc("tls_hellos_without_sni_total", "TLS ClientHellos without a server name (recorded under the server's address).")
	descTLSECH      = srcDesc("tls_ech_hellos_total", "TLS ClientHellos with an encrypted_client_hello extension (the name recorded is the public one).")
	descTLSErrors   = srcDesc("tls_hello_errors_total", "TLS handshakes that started like a ClientHello but could not be parsed.")
	descTLSTooLarge = srcDesc("tls_hellos_too_large_total", "TLS handshakes longer than the ClientHello cap, not recorded.")
	descQUIC        = quicDescs()
	descH2CConns    = srcDesc("h2c_connections_total", "Client streams decoded as cleartext HTTP/2 (h2c): with the preface, or after an accepted Upgrade: h2c.")
	descH2CUpgrades = srcDesc("h2c_upgrades_total", "Of the h2c connections, those after an HTTP/1.1 Upgrade: h2c request.")
	descH2CGivenUp  = prometheus.NewDesc("urldedupd_capture_h2c_given_up_total",
		"h2c connections given up, by reason: frame (not HTTP/2 framing), hpack (a header block HPACK could not decode), over_cap (a header block or HPACK table over its cap), lost (bytes lost in a frame header or header block, or the memory caps).",
		[]string{"source", "reason"}, nil)
	descUndecided  = srcDesc("undecided_total", "Requests the backend could not decide (their URLs are not recorded); capture went on.")
	descUp         = prometheus.NewDesc("urldedupd_source_up", "1 while the capture source runs, 0 after it failed.", []string{"source"}, nil)
	descLost       = prometheus.NewDesc("urldedupd_event_log_lost_records_total", "Event records that could not be written (capture went on).", nil, nil)
	descWriteErr   = prometheus.NewDesc("urldedupd_event_log_write_errors_total", "Failed writes to the event log.", nil, nil)
	descReopen     = prometheus.NewDesc("urldedupd_event_log_reopen_failures_total", "SIGHUPs whose reopen of the event log failed.", nil, nil)
	descStale      = prometheus.NewDesc("urldedupd_event_log_stale", "1 while the last reopen failed: events go to the file the path had before.", nil, nil)
	descFill       = prometheus.NewDesc("urldedupd_fill_ratio", "Fraction of the state used: bits set (bitmap layout) or slots occupied (keyed layout).", nil, nil)
	descDistinct   = prometheus.NewDesc("urldedupd_estimated_distinct_urls", "Distinct URLs recorded: by linear counting (bitmap), slots occupied (keyed).", nil, nil)
	descBitsSet    = prometheus.NewDesc("urldedupd_bits_set", "Bits set in the bitmap (bitmap layout only).", nil, nil)
	descFalseDup   = prometheus.NewDesc("urldedupd_false_duplicate_chance", "Chance that the next new URL is reported a duplicate, from the measured fill by the layout's formula.", nil, nil)
	descCapUsed    = prometheus.NewDesc("urldedupd_capacity_used_ratio", "Distinct URLs recorded over the state's capacity (planned at init, or the keyed layout's own); absent for an unplanned bitmap.", nil, nil)
	descNotStoredP = prometheus.NewDesc("urldedupd_not_stored_chance", "Keyed layout: chance that the next new URL finds both its buckets full and is answered new without being stored.", nil, nil)
	descNotStored  = prometheus.NewDesc("urldedupd_not_stored_total", "Keyed layout: URLs this process answered new without storing them (both buckets full).", nil, nil)
)

// quicDescs describes capture.QUICStats' counters, in Counters' order:
// urldedupd_capture_quic_NAME_total{source}.
func quicDescs() []*prometheus.Desc {
	var ds []*prometheus.Desc
	for _, c := range new(capture.QUICStats).Counters() {
		ds = append(ds, srcDesc("quic_"+c.Name+"_total", "QUIC: "+c.Help+"."))
	}
	return ds
}

func srcDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("urldedupd_capture_"+name, help, []string{"source"}, nil)
}

// collector reports the sources' figures and the state's fill. The fill
// reads all 512 MiB, so it is counted at most every 10 seconds.
type collector struct {
	d        *Daemon
	mu       sync.Mutex
	rep      state.Report
	fillTime time.Time
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPackets, descBytes, descRequests, descNew, descDup, descParseErr,
		descGaps, descDrops, descPanics, descOverflow, descDenied, descEvicted, descOther, descFragments, descDatagrams, descFragDrop, descMalformed, descUndecoded, descLate, descNonHTTP,
		descRecords, descTLSNoSNI, descTLSECH, descTLSErrors, descTLSTooLarge, descH2CConns, descH2CUpgrades, descH2CGivenUp, descUndecided, descUp, descLost, descWriteErr, descReopen, descStale, descFill, descDistinct, descBitsSet, descFalseDup, descCapUsed, descNotStoredP, descNotStored} {
		ch <- d
	}
	for _, d := range descQUIC {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.d.sources {
		st, cnt, undecided := s.snapshot()
		name := s.cfg.Iface
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), name)
		}
		counter(descPackets, st.Packets)
		counter(descBytes, st.Bytes)
		counter(descRequests, cnt.Requests)
		counter(descNew, cnt.New)
		counter(descDup, cnt.Dup)
		counter(descParseErr, st.Assembler.ParseErrors)
		counter(descGaps, st.Assembler.Gaps)
		counter(descDrops, st.KernelDrops)
		counter(descPanics, st.Panics+s.panics.Load())
		counter(descOverflow, st.Assembler.Overflows)
		counter(descDenied, st.Assembler.SegmentsDenied)
		counter(descEvicted, st.Assembler.Evicted)
		counter(descUndecided, undecided)
		counter(descLate, st.Assembler.LateSegments)
		for k, n := range st.Assembler.NonHTTP {
			ch <- prometheus.MustNewConstMetric(descNonHTTP, prometheus.CounterValue, float64(n), name, capture.StreamKind(k).String())
		}
		for p, n := range st.Records {
			ch <- prometheus.MustNewConstMetric(descRecords, prometheus.CounterValue, float64(n), name, capture.Proto(p).String())
		}
		counter(descTLSNoSNI, st.TLS.NoSNI)
		counter(descTLSECH, st.TLS.ECH)
		counter(descTLSErrors, st.TLS.Errors)
		counter(descTLSTooLarge, st.TLS.TooLarge)
		counter(descH2CConns, st.H2C.Connections)
		counter(descH2CUpgrades, st.H2C.Upgrades)
		for _, r := range []struct {
			reason string
			n      uint64
		}{{"frame", st.H2C.FrameErrors}, {"hpack", st.H2C.HPACKErrors}, {"over_cap", st.H2C.OverCap}, {"lost", st.H2C.Lost}} {
			ch <- prometheus.MustNewConstMetric(descH2CGivenUp, prometheus.CounterValue, float64(r.n), name, r.reason)
		}
		for i, q := range st.QUIC.Counters() {
			counter(descQUIC[i], q.Value)
		}
		counter(descOther, st.Other)
		counter(descMalformed, st.DecodeErrors)
		counter(descFragments, st.Fragments)
		counter(descDatagrams, st.Defrag.Reassembled)
		for _, r := range []struct {
			reason string
			n      uint64
		}{{"timeout", st.Defrag.Timeouts}, {"cap", st.Defrag.Evicted}, {"invalid", st.Defrag.Invalid}} {
			ch <- prometheus.MustNewConstMetric(descFragDrop, prometheus.CounterValue, float64(r.n), name, r.reason)
		}
		for _, r := range st.Reasons.Counts() {
			if r.Undecoded() {
				ch <- prometheus.MustNewConstMetric(descUndecoded, prometheus.CounterValue, float64(r.Frames), name, r.Label(), r.Reason.String())
			}
		}
		if n := st.Reasons.LumpedUndecoded; n > 0 {
			ch <- prometheus.MustNewConstMetric(descUndecoded, prometheus.CounterValue, float64(n), name, "further", "further link types or protocols")
		}
		up := 0.0
		if s.up.Load() {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up, name)
	}
	if ev := c.d.cfg.Events; ev != nil {
		st := ev.Stats()
		stale := 0.0
		if st.Stale {
			stale = 1
		}
		ch <- prometheus.MustNewConstMetric(descLost, prometheus.CounterValue, float64(st.Lost))
		ch <- prometheus.MustNewConstMetric(descWriteErr, prometheus.CounterValue, float64(st.WriteErrors))
		ch <- prometheus.MustNewConstMetric(descReopen, prometheus.CounterValue, float64(st.ReopenFailures))
		ch <- prometheus.MustNewConstMetric(descStale, prometheus.GaugeValue, stale)
	}
	c.mu.Lock()
	if time.Since(c.fillTime) > 10*time.Second {
		if r, err := c.d.state.Report(context.Background()); err == nil {
			c.rep, c.fillTime = r, time.Now()
		}
	}
	r := c.rep
	c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	gauge(descFill, r.FillRatio)
	gauge(descFalseDup, r.FalseDupChance)
	if r.EstimatedDistinct != nil {
		gauge(descDistinct, *r.EstimatedDistinct)
	} else if r.Layout != "" {
		gauge(descDistinct, math.Inf(1))
	}
	if r.BitsSet != nil {
		gauge(descBitsSet, float64(*r.BitsSet))
	}
	if r.CapacityUsed != nil {
		gauge(descCapUsed, *r.CapacityUsed)
	}
	if r.NotStoredChance != nil {
		gauge(descNotStoredP, *r.NotStoredChance)
		ch <- prometheus.MustNewConstMetric(descNotStored, prometheus.CounterValue, float64(c.d.state.NotStored()))
	}
}

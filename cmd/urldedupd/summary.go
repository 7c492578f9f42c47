package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/counter"
)

// summary is what replay and capture sum up at the end: the engine's
// counters and the audit log's.
type summary struct {
	stats  capture.Stats
	counts audit.Counts
}

// summaryCounters are the counters of a summary: capture.StatsCounters,
// then audit.CountsCounters.
var summaryCounters = sync.OnceValue(func() counter.Table[summary] {
	return append(
		counter.Nest(capture.StatsCounters(), "", func(s *summary) *capture.Stats { return &s.stats }),
		counter.Nest(audit.CountsCounters, "", func(s *summary) *audit.Counts { return &s.counts })...)
})

// textLine is a line of the text summary: lead, then each counter named
// as "Text value", two spaces apart. A name ending in ':' stands for every
// counter whose name starts with it ("records:"). A line is written when
// shown says so, or, without shown, when one of its counters is not zero.
type textLine struct {
	lead  string
	names string // space-separated
	shown func(s *summary) bool
}

// textLines lay out the text summary; which counter goes on which line is
// the format users read (its words are the counters' Text).
var textLines = []textLine{
	{names: "packets bytes tcp_flows requests new dup parse_errors reassembly_gaps kernel_drops", shown: func(*summary) bool { return true }},
	{names: "malformed_frames ip_fragments buffer_overflows flows_evicted segments_denied late_segments invalid_urls panics_recovered"},
	{names: "ip_datagrams_reassembled ip_datagrams_timed_out ip_datagrams_dropped_at_cap ip_datagrams_invalid", shown: func(s *summary) bool { return s.stats.Fragments > 0 }},
	{lead: "records by protocol:", names: "records:", shown: func(s *summary) bool { return recordsBeyondHTTP(&s.stats) }},
	{names: "tls_hellos_without_sni tls_ech_hellos tls_hello_errors tls_hellos_too_large", shown: func(s *summary) bool {
		return s.stats.Records[capture.ProtoTLS] > 0 || s.stats.TLS != (capture.TLSStats{})
	}},
	{names: "quic_datagrams quic_decrypted quic_auth_failed quic_unknown_version quic_malformed quic_connections quic_evicted quic_expired", shown: quicSeen},
	{names: "quic_hellos quic_hellos_without_sni quic_ech_hellos quic_hello_errors quic_not_hello", shown: quicSeen},
	{names: "h2c_connections h2c_upgrades h2c_frame_errors h2c_hpack_errors h2c_over_cap h2c_lost"},
	{names: "starttls_preludes starttls_started starttls_over_cap starttls_malformed"},
	{lead: "streams of other protocols than HTTP/1.x:", names: "non_http:"},
}

// quicSeen reports whether any QUIC counter is not zero.
func quicSeen(s *summary) bool { return s.stats.QUIC != (capture.QUICStats{}) }

// counters returns the summary counters a textLine names, in its order.
func (l *textLine) counters() []*counter.Desc[summary] {
	var ds []*counter.Desc[summary]
	for _, n := range strings.Fields(l.names) {
		sc := summaryCounters()
		for i := range sc {
			d := &sc[i]
			if d.Name == n || strings.HasSuffix(n, ":") && strings.HasPrefix(d.Name, n) {
				ds = append(ds, d)
			}
		}
	}
	return ds
}

// textLayout is textLines' counters, looked up once, at the first
// summary (not at the start of every command).
var textLayout = sync.OnceValue(func() [][]*counter.Desc[summary] {
	l := make([][]*counter.Desc[summary], len(textLines))
	for i := range textLines {
		l[i] = textLines[i].counters()
	}
	return l
})

func writeSummary(w io.Writer, st capture.Stats, c audit.Counts) {
	s := &summary{stats: st, counts: c}
	for i, line := range textLines {
		shown := line.shown != nil && line.shown(s)
		var b []byte
		for _, d := range textLayout()[i] {
			v := d.Value(s)
			if v != 0 && line.shown == nil {
				shown = true
			} else if v == 0 && d.Sparse {
				continue
			}
			if len(b) > 0 || line.lead != "" {
				b = append(b, "  "...)
			}
			b = fmt.Appendf(b, "%s %d", d.Text, v)
		}
		if shown && len(b) > 0 {
			fmt.Fprintf(w, "%s%s\n", line.lead, b)
		}
	}
	for _, line := range s.stats.Reasons.Describe() {
		fmt.Fprintln(w, line)
	}
}

// recordsBeyondHTTP reports whether s has records of another protocol
// than HTTP/1.x: the summary then counts them all by protocol.
func recordsBeyondHTTP(s *capture.Stats) bool {
	for p, n := range s.Records {
		if capture.Proto(p) != capture.ProtoHTTP && n > 0 {
			return true
		}
	}
	return false
}

// jsonFirst are the keys the --json summary has begun with since it was
// first written, in that order; the frames by reason follow them (see
// appendReasons), then every other counter in summaryCounters' order,
// a counter named GROUP:KEY (records:quic, non_http:ssh) as KEY in an
// object GROUP ("records": {"quic": 1}), so that no key needs quoting in jq.
var jsonFirst = strings.Fields(`packets bytes tcp_flows requests new dup parse_errors reassembly_gaps kernel_drops
	malformed_frames ip_fragments ip_datagrams_reassembled ip_datagrams_timed_out ip_datagrams_dropped_at_cap
	ip_datagrams_invalid buffer_overflows flows_evicted segments_denied invalid_urls panics_recovered late_segments
	other_frames quic_frames undecoded_frames tls_hellos_without_sni tls_ech_hellos tls_hello_errors tls_hellos_too_large
	h2c_connections h2c_upgrades h2c_frame_errors h2c_hpack_errors h2c_over_cap h2c_lost`)

// jsonLayout is the --json summary's counters: those of jsonFirst, and
// the rest; looked up once, at the first summary.
var jsonLayout = sync.OnceValues(func() (first, rest []*counter.Desc[summary]) {
	seen := map[string]bool{}
	sc := summaryCounters()
	for _, n := range jsonFirst {
		if d := sc.Lookup(n); d != nil && d.In(counter.JSON) {
			first = append(first, d)
			seen[n] = true
		}
	}
	for i := range sc {
		if d := &sc[i]; d.In(counter.JSON) && !seen[d.Name] {
			rest = append(rest, d)
		}
	}
	return first, rest
})

// appendReasons adds the frames without TCP by reason to the summary
// object b, as two objects: "undecoded": {"linktype:127": 26} and
// "other": {"ipproto:1": 3}; "further" in each counts the reasons past
// capture.MaxReasons.
func appendReasons(b []byte, r *capture.Reasons) []byte {
	for _, undecoded := range []bool{true, false} {
		if undecoded {
			b = append(b, `,"undecoded":{`...)
		} else {
			b = append(b, `,"other":{`...)
		}
		n := 0
		add := func(label string, frames uint64) {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = fmt.Appendf(b, "%q:%d", label, frames)
		}
		for _, c := range r.Counts() {
			if c.Undecoded() == undecoded {
				add(c.Label(), c.Frames)
			}
		}
		lumped := r.LumpedOther
		if undecoded {
			lumped = r.LumpedUndecoded
		}
		if lumped > 0 {
			add("further", lumped)
		}
		b = append(b, '}')
	}
	return b
}

func writeJSONSummary(w io.Writer, st capture.Stats, c audit.Counts) {
	s := &summary{stats: st, counts: c}
	head, tail := jsonLayout()
	b := []byte{'{'}
	for _, d := range head {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%q:%d", d.Name, d.Value(s))
	}
	b = appendReasons(b, &s.stats.Reasons)
	// The rest in order; the counters of a group together, in one object
	// at the place of the group's first.
	done := map[string]bool{}
	for i, d := range tail {
		group, _, grouped := strings.Cut(d.Name, ":")
		if !grouped {
			if v := d.Value(s); v != 0 || !d.Sparse {
				b = fmt.Appendf(b, ",%q:%d", d.Name, v)
			}
			continue
		}
		if done[group] {
			continue
		}
		done[group] = true
		b = fmt.Appendf(b, ",%q:{", group)
		n := 0
		for _, e := range tail[i:] {
			g, key, _ := strings.Cut(e.Name, ":")
			if v := e.Value(s); g == group && (v != 0 || !e.Sparse) {
				if n > 0 {
					b = append(b, ',')
				}
				n++
				b = fmt.Appendf(b, "%q:%d", key, v)
			}
		}
		b = append(b, '}')
	}
	fmt.Fprintf(w, "%s}\n", b)
}

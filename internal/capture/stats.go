package capture

import "github.com/urldedupd/urldedupd/internal/counter"

// DefragStats count fragment reassembly (the decoder's decode.FragStats,
// copied into Stats).
type DefragStats struct {
	Reassembled uint64 // datagrams reassembled from fragments
	Timeouts    uint64 // datagrams dropped: not complete within their timeout
	Evicted     uint64 // datagrams dropped at MaxDatagrams or MaxBytes, oldest first
	Invalid     uint64 // datagrams dropped: inconsistent fragments or too long
}

// DefragStatsCounters describes DefragStats' counters (internal/counter);
// the datagrams dropped are one metric, by reason.
var DefragStatsCounters = counter.Table[DefragStats]{
	{Name: "ip_datagrams_reassembled", Help: "IP datagrams reassembled from fragments", Text: "IP datagrams reassembled", Field: func(s *DefragStats) *uint64 { return &s.Reassembled }},
	{Name: "ip_datagrams_timed_out", Help: "IP datagrams in reassembly dropped: not complete in time", Text: "dropped incomplete after the timeout",
		Metric: "ip_datagrams_dropped", Label: "reason=timeout", MetricHelp: "IP datagrams in reassembly dropped, by reason: timeout (not complete in time), cap (the oldest at the cap on datagrams or bytes held), invalid (inconsistent fragments or too long)",
		Field: func(s *DefragStats) *uint64 { return &s.Timeouts }},
	{Name: "ip_datagrams_dropped_at_cap", Help: "IP datagrams in reassembly dropped, the oldest at the cap on datagrams or bytes held", Text: "dropped at the cap", Metric: "ip_datagrams_dropped", Label: "reason=cap", Field: func(s *DefragStats) *uint64 { return &s.Evicted }},
	{Name: "ip_datagrams_invalid", Help: "IP datagrams in reassembly dropped: inconsistent fragments or too long", Text: "dropped invalid", Metric: "ip_datagrams_dropped", Label: "reason=invalid", Field: func(s *DefragStats) *uint64 { return &s.Invalid }},
}

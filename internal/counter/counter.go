// Package counter describes the counters of a stats type once, in a table
// beside the type, so that every place that shows or adds them (the text
// and JSON summaries, the Prometheus metrics, the daemon's sum over
// restarted engines) is a loop over that table and a new counter cannot be
// forgotten in one of them.
//
// A table is read at start-up or at a scrape, never on a hot path: the
// stats types themselves stay plain structs of uint64 that the hot paths
// increment.
package counter

import "strings"

// Output is a place a counter is shown.
type Output uint8

const (
	// JSON is the --json summary of replay and capture.
	JSON Output = 1 << iota
	// Metrics is the daemon's Prometheus exposition.
	Metrics
)

// Merge says how two processes' (or engines') values of a counter make one.
type Merge uint8

const (
	// Sum adds them: a count of events.
	Sum Merge = iota
	// Max keeps the larger: a running total the source keeps itself (the
	// kernel's drop count), which a restarted engine reads again.
	Max
)

// Desc describes one counter of the stats type S.
type Desc[S any] struct {
	// Name is the counter's snake_case name: the JSON summary's key and,
	// unless Metric is set, the stem of its metric ("parse_errors" →
	// urldedupd_capture_parse_errors_total).
	Name string
	// Help says what it counts, in a sentence without the final period.
	Help string
	// Unit is "" for a count of events, else the unit of what is counted
	// ("bytes"), as the metric's name ends before _total.
	Unit string
	// Metric is the stem of the metric this counter is one series of, when
	// several counters make one metric told apart by Label; "" for Name.
	Metric string
	// MetricHelp is the help of the metric Metric; the first counter of a
	// metric gives it.
	MetricHelp string
	// Label is the label that tells this counter apart in Metric, as
	// "reason=timeout".
	Label string
	// Text is the words before the counter in the text summary; "" if the
	// text summary does not show it.
	Text string
	// Not lists the outputs that leave the counter out.
	Not Output
	// Sparse counters are shown in the summaries only when not zero.
	Sparse bool
	// Merge says how two values of it make one.
	Merge Merge
	// Field returns the counter in s.
	Field func(s *S) *uint64
}

// In reports whether o shows the counter.
func (d *Desc[S]) In(o Output) bool { return d.Not&o == 0 }

// MetricName is the stem of the counter's metric: Metric, else Name.
func (d *Desc[S]) MetricName() string {
	if d.Metric != "" {
		return d.Metric
	}
	return d.Name
}

// LabelPair splits Label into its name and value ("", "" when it has none).
func (d *Desc[S]) LabelPair() (name, value string) {
	name, value, _ = strings.Cut(d.Label, "=")
	return name, value
}

// Value is the counter's value in s.
func (d *Desc[S]) Value(s *S) uint64 { return *d.Field(s) }

// Table is the counters of a stats type, in the order the summaries show
// them.
type Table[S any] []Desc[S]

// Add adds b's counters to a's, each as its Merge says.
func (t Table[S]) Add(a, b *S) {
	for i := range t {
		x, y := t[i].Field(a), t[i].Field(b)
		switch t[i].Merge {
		case Max:
			*x = max(*x, *y)
		default:
			*x += *y
		}
	}
}

// Lookup returns the counter named name, or nil.
func (t Table[S]) Lookup(name string) *Desc[S] {
	for i := range t {
		if t[i].Name == name {
			return &t[i]
		}
	}
	return nil
}

// Nest makes t, a table of the type T inside S, a table of S: f finds the
// T in an S. prefix goes before each Name (and Metric), as "quic_".
func Nest[S, T any](t Table[T], prefix string, f func(*S) *T) Table[S] {
	out := make(Table[S], len(t))
	for i, d := range t {
		field := d.Field
		out[i] = Desc[S]{Name: prefix + d.Name, Help: d.Help, Unit: d.Unit, MetricHelp: d.MetricHelp,
			Label: d.Label, Text: d.Text, Not: d.Not, Sparse: d.Sparse, Merge: d.Merge,
			Field: func(s *S) *uint64 { return field(f(s)) }}
		if d.Metric != "" {
			out[i].Metric = prefix + d.Metric
		}
	}
	return out
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/counter"
)

// goldenCases are summaries whose text and JSON are kept in testdata as
// the summaries printed them before they were loops over the counters'
// descriptions (issue 20, item 5): every counter set to its own value;
// a run with only HTTP; one with fragments and non-HTTP streams.
func goldenCases() map[string]*summary {
	all := &summary{}
	sc := summaryCounters()
	for i := range sc {
		*sc[i].Field(all) = uint64(1000 + i)
	}
	http := &summary{}
	http.stats.Packets, http.stats.Bytes, http.stats.Assembler.Flows = 40, 6000, 3
	http.counts.Requests, http.counts.New, http.counts.Dup = 5, 4, 1
	http.stats.Records[capture.ProtoHTTP] = 5
	frag := &summary{}
	frag.stats.Packets, frag.stats.Fragments, frag.stats.Defrag.Reassembled = 9, 4, 2
	frag.stats.Assembler.NonHTTP[1] = 2
	frag.stats.TLS.ECH = 1
	return map[string]*summary{"all": all, "http": http, "frag": frag}
}

// The summaries print byte for byte what testdata holds: as they printed
// before they were loops over the counters' descriptions (issue 20, item
// 5), with the groups of the JSON summary as objects and QUIC frames
// counted once (issue 25, item 10).
func TestSummaryGolden(t *testing.T) {
	t.Parallel()
	for name, s := range goldenCases() {
		for _, f := range []struct {
			ext   string
			write func(*bytes.Buffer)
		}{
			{".txt", func(b *bytes.Buffer) { writeSummary(b, s.stats, s.counts) }},
			{".json", func(b *bytes.Buffer) { writeJSONSummary(b, s.stats, s.counts) }},
		} {
			want, err := os.ReadFile("testdata/summary-" + name + f.ext)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			f.write(&b)
			if b.String() != string(want) {
				t.Errorf("%s%s:\n%s\nwant\n%s", name, f.ext, b.String(), want)
			}
		}
	}
}

// Every counter of every stats type in a summary appears exactly once in
// the JSON summary (unless its description leaves it out) and, if it has
// words, exactly once in the text summary: a counter added to a stats
// type's table cannot be forgotten in either.
func TestSummaryCountersOnce(t *testing.T) {
	t.Parallel()
	s := goldenCases()["all"]
	var text, js bytes.Buffer
	writeSummary(&text, s.stats, s.counts)
	writeJSONSummary(&js, s.stats, s.counts)
	// Counters, and objects of counters by group: GROUP:KEY.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &raw); err != nil {
		t.Fatalf("JSON summary: %v\n%s", err, js.String())
	}
	obj := map[string]uint64{}
	for k, v := range raw {
		var n uint64
		if json.Unmarshal(v, &n) == nil {
			obj[k] = n
			continue
		}
		var group map[string]uint64
		if err := json.Unmarshal(v, &group); err != nil {
			t.Fatalf("JSON summary: %s: %v", k, err)
		}
		for g, n := range group {
			obj[k+":"+g] = n
		}
	}
	inJSON := 0
	sc := summaryCounters()
	for i := range sc {
		d := &sc[i]
		v := strconv.FormatUint(d.Value(s), 10)
		if d.In(counter.JSON) {
			inJSON++
			_, key, grouped := strings.Cut(d.Name, ":")
			if !grouped {
				key = d.Name
			}
			if got, ok := obj[d.Name]; !ok || got != d.Value(s) || !grouped && strings.Count(js.String(), `"`+key+`":`) != 1 {
				t.Errorf("JSON summary: %s is %d (present %v), want %s once", d.Name, got, ok, v)
			}
		}
		if d.Text != "" && strings.Count(text.String(), d.Text+" "+v) != 1 {
			t.Errorf("text summary: %q appears %d times, want once", d.Text+" "+v, strings.Count(text.String(), d.Text+" "+v))
		}
		if d.Text == "" && !d.In(counter.JSON) && !d.In(counter.Metrics) {
			t.Logf("%s is in no output but the daemon's sum", d.Name)
		}
	}
	if len(obj) != inJSON { // no reasons in this summary
		t.Errorf("JSON summary has %d keys, want the %d counters", len(obj), inJSON)
	}
	for i, l := range textLayout() {
		if len(l) == 0 {
			t.Errorf("text line %d (%q) names no counter", i, textLines[i].names)
		}
		for _, d := range l {
			if d.Text == "" {
				t.Errorf("text line %d shows %s, which has no words", i, d.Name)
			}
		}
	}
}

// Writing a summary is not on a hot path, but it stays cheap: the layout
// is looked up once, at start-up.
func BenchmarkWriteJSONSummary(b *testing.B) {
	s := goldenCases()["all"]
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		writeJSONSummary(&buf, s.stats, s.counts)
	}
}

// The reasons past capture.MaxReasons are "further" in each kind's object
// of the JSON summary.
func TestJSONSummaryFurther(t *testing.T) {
	t.Parallel()
	s := &summary{}
	s.stats.Reasons.LumpedUndecoded, s.stats.Reasons.LumpedOther = 4, 2
	var js bytes.Buffer
	writeJSONSummary(&js, s.stats, s.counts)
	for _, want := range []string{`"undecoded":{"further":4}`, `"other":{"further":2}`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON summary lacks %s:\n%s", want, js.String())
		}
	}
}

package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/state"
)

// A state flushed in the background shows its flushes in the metrics,
// in the text format promtool accepts; one without shows none.
func TestMetricsFlush(t *testing.T) {
	tmp := t.TempDir()
	st, err := state.Open(context.Background(), filepath.Join(tmp, "state"),
		&state.Options{Create: true, Local: shardfile.Options{FlushInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := New(st, Config{Socket: filepath.Join(tmp, "api.sock")})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	for i := 0; st.Dir().FlushStats().Flushes < 2; i++ {
		if i == 3000 {
			t.Fatalf("no two flushes in 30 s: %+v", st.Dir().FlushStats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var b bytes.Buffer
	if _, err := d.metrics.reg.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	value := func(series string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s in the exposition:\n%s", series, out)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := value(`urldedupd_state_flushes_total{result="ok"}`); v < 2 {
		t.Errorf("flushes ok = %v, want at least 2", v)
	}
	if v := value(`urldedupd_state_flushes_total{result="error"}`); v != 0 {
		t.Errorf("flushes failed = %v, want 0", v)
	}
	if v := value("urldedupd_state_flush_interval_seconds"); v != 0.02 {
		t.Errorf("interval = %v, want 0.02", v)
	}
	if v := value("urldedupd_state_flush_duration_seconds"); v <= 0 || v > time.Since(started).Seconds() {
		t.Errorf("last flush took %v s", v)
	}
	if v := value("urldedupd_state_last_flush_success_timestamp_seconds"); v < float64(started.Unix())-1 || v > float64(time.Now().Unix())+1 {
		t.Errorf("last good flush at %v, want between %v and now", v, started.Unix())
	}
	if v := value(`urldedupd_state_checkpoints_total{result="ok"}`); v != 0 {
		t.Errorf("checkpoints = %v before the first interval", v)
	}
	if v := value("urldedupd_state_checkpoint_interval_seconds"); v != state.DefaultCheckpoint.Seconds() {
		t.Errorf("checkpoint interval = %v", v)
	}
	if v := value("urldedupd_state_last_checkpoint_success_timestamp_seconds"); v < float64(started.Unix())-60 || v > float64(time.Now().Unix())+1 {
		t.Errorf("last checkpoint at %v, want the open's time", v)
	}
	js, _ := st.JournalStats()
	sigs, seen := []signature.Signature{1, 2, 3}, make([]bool, 3)
	if err := st.Decide(context.Background(), sigs, seen, false); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if _, err := d.metrics.reg.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	if v := value("urldedupd_state_journal_bytes"); v < float64(js.Bytes+3*8) {
		t.Errorf("journal bytes = %v after 3 URLs, was %d", v, js.Bytes)
	}
	promtoolCheck(t, out)

	plain, _ := scrape(t) // a state without a background flush
	if strings.Contains(plain, "urldedupd_state_flush") || strings.Contains(plain, "urldedupd_state_journal") {
		t.Errorf("flush metrics for a state not flushed in the background:\n%s", plain)
	}
}

// What the daemon logs of the flushes: a failure at once and then at most
// once a minute while they keep failing, the recovery, and a flush slower
// than its interval at most once a minute.
func TestFlushReport(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var r flushReport
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	good := shardfile.FlushStats{Interval: time.Second, Flushes: 5, Last: 10 * time.Millisecond, LastOK: t0}
	bad := good
	bad.Flushes, bad.Failures, bad.Err, bad.LastFailure = 6, 1, syscall.EIO, syscall.EIO
	worse := bad
	worse.Flushes, worse.Failures = 40, 35
	back := worse
	back.Flushes, back.Err, back.LastOK = 41, nil, t0.Add(70*time.Second)
	slow := back
	slow.Flushes, slow.Last = 42, 3*time.Second
	blip := slow // a failure and a good flush again between two looks
	blip.Flushes, blip.Failures, blip.Last = 44, 36, 10*time.Millisecond
	steps := []struct {
		f    shardfile.FlushStats
		at   time.Duration
		want string // a regexp of the lines logged, "" for none
	}{
		{good, 0, ""},
		{bad, time.Second, `level=ERROR msg="state: flush failed`},
		{worse, 30 * time.Second, ""}, // still failing, within the minute
		{worse, 62 * time.Second, `level=ERROR msg="state: flush failed`},
		{back, 71 * time.Second, `level=INFO msg="state: flushing again"`},
		{slow, 72 * time.Second, `level=WARN msg="state: a flush took longer than --flush-interval`},
		{slow, 80 * time.Second, ""},
		{slow, 140 * time.Second, `level=WARN msg="state: a flush took longer than --flush-interval`},
		{blip, 150 * time.Second, "err=\"input/output error\"\ntime=.* level=INFO msg=\"state: flushing again\""},
		{blip, 151 * time.Second, ""},
		{shardfile.FlushStats{}, 200 * time.Second, ""}, // no background flush
	}
	for i, s := range steps {
		buf.Reset()
		r.report("/var/lib/urldedupd", s.f, log, t0.Add(s.at))
		got := buf.String()
		switch {
		case s.want == "" && got != "":
			t.Errorf("step %d: logged %q, want nothing", i, got)
		case s.want != "" && (strings.Count(got, "\n") != 1+strings.Count(s.want, "\n") || !regexp.MustCompile(s.want).MatchString(got) || !strings.Contains(got, "dir=/var/lib/urldedupd")):
			t.Errorf("step %d: logged %q, want %q", i, got, s.want)
		}
	}
}

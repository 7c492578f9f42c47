package compare

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// Errors.
var (
	// ErrLayout is returned for a layout name compare does not know.
	ErrLayout = errors.New("compare: unknown layout")
	// ErrInput is returned for input that gives nothing to compare on.
	ErrInput = errors.New("compare: bad input")
)

// Options say what to compare on.
type Options struct {
	// URLs are inserted: read from URLFile, one per line, or, when it is
	// nil, Synthetic distinct URLs are made.
	URLFile   io.Reader
	Synthetic int
	// HeldOut are queried after the insertion (a dry run): read from
	// HeldOutFile (lines that were inserted are left out), or, when nil,
	// HeldOutSynthetic URLs distinct from the inserted ones are made.
	HeldOutFile      io.Reader
	HeldOutSynthetic int
	Layouts          []string // nil: all of Layouts
	Memory           int64    // bytes each layout may use where its rules allow; 0: 512 MiB
	TempDir          string   // where temporary states go ("": the system's)
	// Curve, when set, measures the false-duplicate rate on a sample of
	// the held-out URLs at points along the insertion (for a plot).
	Curve bool
	// Progress, when set, is told what is being done (on stderr).
	Progress io.Writer
}

// Point is a false-duplicate rate measured after Inserted distinct URLs.
type Point struct {
	Inserted uint64  `json:"inserted"`
	Rate     Rate    `json:"rate"`
	Theory   float64 `json:"theory"`
}

// Result is one layout's measurement.
type Result struct {
	Info
	Lines          uint64        `json:"lines"`    // URLs inserted, repeats included
	Inserted       uint64        `json:"inserted"` // distinct URLs inserted
	InsertTime     time.Duration `json:"insert_ns"`
	QueryTime      time.Duration `json:"query_ns"`
	InsertFalseDup Rate          `json:"insert_false_dup"` // new URLs answered dup while inserting
	FalseDup       Rate          `json:"false_dup"`        // held-out URLs answered dup
	Theory         float64       `json:"theory"`           // the layout's rate after Inserted
	Curve          []Point       `json:"curve,omitempty"`
}

// BytesPerURL is the layout's bytes per distinct URL inserted.
func (r Result) BytesPerURL() float64 { return float64(r.Bytes) / math.Max(1, float64(r.Inserted)) }

// InsertRate is URLs inserted (repeats included) per second.
func (r Result) InsertRate() float64 { return float64(r.Lines) / r.InsertTime.Seconds() }

// QueryRate is held-out URLs per second.
func (r Result) QueryRate() float64 { return float64(r.FalseDup.Trials) / r.QueryTime.Seconds() }

// batch is how many URLs a contender decides at a time.
const batch = 4096

// Run measures every chosen layout on the same URLs, one after another.
func Run(o Options) ([]Result, error) {
	if o.Memory == 0 {
		o.Memory = 512 << 20
	}
	layouts := o.Layouts
	if len(layouts) == 0 {
		layouts = Layouts
	}
	in, err := load(o.URLFile, o.Synthetic, 0, "urls")
	if err != nil {
		return nil, err
	}
	// The truth: which inserted URLs repeat an earlier one.
	repeat := make([]bool, len(in))
	exact := &exactC{set: make(map[string]struct{}, len(in))}
	for i := 0; i < len(in); i += batch {
		exact.decide(in[i:min(i+batch, len(in))], repeat[i:min(i+batch, len(in))], false)
	}
	distinct := uint64(len(exact.set))
	held, err := load(o.HeldOutFile, o.HeldOutSynthetic, len(in), "held-out")
	if err != nil {
		return nil, err
	}
	kept := held[:0]
	for _, u := range held {
		if _, ok := exact.set[string(u)]; !ok {
			kept = append(kept, u)
		}
	}
	held = kept
	if len(held) == 0 {
		return nil, fmt.Errorf("%w: no held-out URL that was not inserted", ErrInput)
	}
	progress(o.Progress, "%d URLs (%d distinct), %d held-out", len(in), distinct, len(held))
	var out []Result
	for _, name := range layouts {
		c, err := newContender(name, o.Memory, distinct, o.TempDir)
		if err != nil {
			return out, err
		}
		progress(o.Progress, "%s: inserting", name)
		r, err := measure(c, in, repeat, held, o.Curve)
		if cerr := c.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return out, fmt.Errorf("compare: %s: %w", name, err)
		}
		progress(o.Progress, "%s: %.3g false duplicates among %d held-out", name, r.FalseDup.Value(), r.FalseDup.Trials)
		out = append(out, r)
	}
	return out, nil
}

func measure(c contender, in [][]byte, repeat []bool, held [][]byte, curve bool) (Result, error) {
	r := Result{Lines: uint64(len(in))}
	seen := make([]bool, batch)
	sample := held[:min(len(held), 100_000)]
	next := uint64(1000)
	for i := 0; i < len(in); i += batch {
		end := min(i+batch, len(in))
		start := time.Now()
		if err := c.decide(in[i:end], seen, false); err != nil {
			return r, err
		}
		r.InsertTime += time.Since(start)
		for j, s := range seen[:end-i] {
			if !repeat[i+j] {
				r.Inserted++
				r.InsertFalseDup.Trials++
				if s {
					r.InsertFalseDup.Hits++
				}
			}
		}
		if curve && (r.Inserted >= next || end == len(in)) {
			rate, err := query(c, sample, seen)
			if err != nil {
				return r, err
			}
			r.Curve = append(r.Curve, Point{Inserted: r.Inserted, Rate: rate, Theory: c.theory(r.Inserted)})
			for next <= r.Inserted {
				next = next * 3 / 2 // ~6 points a decade
			}
		}
	}
	start := time.Now()
	rate, err := query(c, held, seen)
	r.QueryTime = time.Since(start)
	r.FalseDup, r.Theory, r.Info = rate, c.theory(r.Inserted), c.info()
	return r, err
}

// query asks c about every URL of urls in a dry run and counts the dups.
func query(c contender, urls [][]byte, seen []bool) (Rate, error) {
	var r Rate
	for i := 0; i < len(urls); i += batch {
		end := min(i+batch, len(urls))
		if err := c.decide(urls[i:end], seen, true); err != nil {
			return r, err
		}
		for _, s := range seen[:end-i] {
			if s {
				r.Hits++
			}
		}
		r.Trials += uint64(end - i)
	}
	return r, nil
}

// load reads URLs from f in normal form, or makes n synthetic distinct
// URLs whose ids start at from.
func load(f io.Reader, n, from int, what string) ([][]byte, error) {
	signer := signature.NewSigner(signature.IEEE, signature.Safe)
	var out [][]byte
	if f == nil {
		if n <= 0 {
			return nil, fmt.Errorf("%w: no %s (give a file or a synthetic count)", ErrInput, what)
		}
		out = make([][]byte, n)
		paths := []string{"products", "news/world", "blog/2026", "static/img", "search", "user/profile"}
		for i := range out {
			id := from + i
			h := uint64(id)*0x9e3779b97f4a7c15 + 1
			out[i] = fmt.Appendf(nil, "http://site%d.example.com/%s/%d.html?id=%d", h%5000, paths[h%uint64(len(paths))], id, h%1000003)
		}
		return out, nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		norm, err := signer.Normalized(b)
		if err != nil {
			norm = b
		}
		out = append(out, append([]byte(nil), norm...))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s line %d: %v", ErrInput, what, line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s has no URL", ErrInput, what)
	}
	return out, nil
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "compare: "+format+"\n", args...)
	}
}

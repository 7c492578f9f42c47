package window

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits of a window.
const (
	// MinWindow is the shortest window accepted: short enough for a demo
	// or a test from outside the process, long enough that a generation
	// is not shorter than a batch.
	MinWindow = time.Second
	// MinLength is the shortest generation.
	MinLength = 100 * time.Millisecond
	// MaxGenerations is the most generations a window is cut into: the
	// tags repeat every Tags generations, and the sweep needs time to
	// clear expired slots before they do (see SweepHorizon).
	MaxGenerations = 32
)

// ErrSpec reports a window that cannot be kept: too short, too many or too
// few generations, an unknown policy.
var ErrSpec = errors.New("window: invalid window")

// Policy says what a sighting of a URL that is held does.
type Policy uint8

const (
	// FirstSeen leaves it as it is: a URL is new again once its first
	// sighting has aged out of the window (re-crawl every window).
	FirstSeen Policy = 1 + iota
	// LastSeen re-stamps it with the current generation: a URL is new
	// again only after a whole window without a sighting.
	LastSeen
)

// String returns the policy's name as init and the metadata spell it.
func (p Policy) String() string {
	switch p {
	case FirstSeen:
		return "first-seen"
	case LastSeen:
		return "last-seen"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}

// ParsePolicy parses "first-seen" or "last-seen".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "first-seen":
		return FirstSeen, nil
	case "last-seen":
		return LastSeen, nil
	}
	return 0, fmt.Errorf("%w: policy %q: want first-seen or last-seen", ErrSpec, s)
}

// Spec is a window as the metadata keeps it.
type Spec struct {
	Epoch       time.Time     // generation 0 starts here
	Window      time.Duration // how long a sighting holds
	Generations int           // the window is cut into this many generations
	Policy      Policy
}

// Length returns a generation's length: Window / Generations.
func (s Spec) Length() time.Duration { return s.Window / time.Duration(s.Generations) }

// Validate reports whether s can be kept.
func (s Spec) Validate() error {
	switch {
	case s.Generations < 1 || s.Generations > MaxGenerations:
		return fmt.Errorf("%w: %d generations: want 1 to %d", ErrSpec, s.Generations, MaxGenerations)
	case s.Window < MinWindow:
		return fmt.Errorf("%w: window %v: want at least %v", ErrSpec, s.Window, MinWindow)
	case s.Window > maxDuration: // ParseDuration would not read it back from the metadata
		return fmt.Errorf("%w: window %s: longer than %d days", ErrSpec, FormatDuration(s.Window), maxDays)
	case s.Length() < MinLength:
		return fmt.Errorf("%w: window %v in %d generations is %v a generation: want at least %v",
			ErrSpec, s.Window, s.Generations, s.Length(), MinLength)
	case s.Window%time.Duration(s.Generations) != 0:
		return fmt.Errorf("%w: window %v does not divide into %d generations of whole nanoseconds", ErrSpec, s.Window, s.Generations)
	case s.Policy != FirstSeen && s.Policy != LastSeen:
		return fmt.Errorf("%w: %v", ErrSpec, s.Policy)
	case s.Epoch.IsZero():
		return fmt.Errorf("%w: no epoch", ErrSpec)
	}
	return nil
}

// Gen returns the generation of instant t. An instant before the epoch (a
// clock set back past the state's creation) is generation 0.
func (s Spec) Gen(t time.Time) int64 {
	d := t.Sub(s.Epoch)
	if d < 0 {
		return 0
	}
	return int64(d / s.Length())
}

// Current returns the generation to decide with, given w, the highest
// generation any process has used on the state, and this process's clock:
// the later of the two. A clock behind the others (or set backwards) never
// takes the state back; the caller stores the result as the new w.
func (s Spec) Current(w int64, now time.Time) int64 { return max(w, s.Gen(now)) }

// Start returns the instant generation g starts.
func (s Spec) Start(g int64) time.Time { return s.Epoch.Add(time.Duration(g) * s.Length()) }

// Live reports whether a URL stamped with generation h is held at
// generation cur.
func (s Spec) Live(cur, h int64) bool { return h <= cur && cur-h < int64(s.Generations) }

// ParseDuration parses a window's length: Go's durations ("36h", "90s",
// "1h30m") with days in front ("30d", "1d12h"); a day is 24 hours.
func ParseDuration(v string) (time.Duration, error) {
	var days int64
	rest := v
	if i := strings.IndexByte(v, 'd'); i > 0 {
		n, err := strconv.ParseInt(v[:i], 10, 64)
		if err != nil || n < 0 || n > maxDays {
			return 0, fmt.Errorf("%w: duration %q: want a whole number of days before d", ErrSpec, v)
		}
		days, rest = n, v[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil || d < 0 {
			return 0, fmt.Errorf("%w: duration %q: want for example 30d, 24h, 90s or 1d12h", ErrSpec, v)
		}
	} else if days == 0 {
		return 0, fmt.Errorf("%w: duration %q: want for example 30d, 24h, 90s or 1d12h", ErrSpec, v)
	}
	if d > maxDuration-time.Duration(days)*24*time.Hour {
		return 0, fmt.Errorf("%w: duration %q: longer than %d days", ErrSpec, v, maxDays)
	}
	return time.Duration(days)*24*time.Hour + d, nil
}

// maxDays bounds the durations ParseDuration reads: a century, however
// written ("36500d", "876000h"), so that what it accepts FormatDuration
// writes back in a form it accepts.
const (
	maxDays     = 36_500
	maxDuration = maxDays * 24 * time.Hour
)

// FormatDuration writes d as ParseDuration reads it, with whole days as
// "d": 720h0m0s is "30d", 36h is "1d12h".
func FormatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	days, rest := d/day, d%day
	switch {
	case days == 0:
		return trimZeros(d.String())
	case rest == 0:
		return strconv.FormatInt(int64(days), 10) + "d"
	}
	return strconv.FormatInt(int64(days), 10) + "d" + trimZeros(rest.String())
}

// trimZeros drops the zero minutes and seconds Go writes after a larger
// unit: "12h0m0s" is "12h", "30m0s" is "30m".
func trimZeros(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

package layout

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
)

// Clocked is a Layout whose answers depend on the time (the windowed
// layouts): WithClock returns it reading now instead of time.Now, for the
// states it opens afterwards. Package state gives it the clock of its
// Options (tests cross generations in milliseconds).
type Clocked interface {
	WithClock(now func() time.Time) Layout
}

// Forgetter is a Local or Remote that can forget URLs: each signature's
// URL is new at its next sighting, and no other URL changes. Only layouts
// that hold a URL in a place of its own can (the keyed ones); the others
// share bits among URLs, and clearing one would forget its neighbours.
type Forgetter interface {
	// Forget forgets sigs; was[i] reports whether sigs[i] was held.
	Forget(ctx context.Context, sigs []signature.Signature, was []bool) error
}

// AnswerDecoder is RedisCommands whose replies carry more than their
// answer (a windowed layout's reply also says the generation): Answer
// returns the answer (AnswerNew, AnswerDup, AnswerNotStored) of reply v.
type AnswerDecoder interface {
	Answer(v int64) int64
}

// WindowReport is a windowed state's window in a Report: the window as
// the metadata keeps it, the current generation, and each live
// generation's URLs or bits, youngest first.
type WindowReport struct {
	Window      string `json:"window"`
	Generations int    `json:"generations"`
	Policy      string `json:"policy"`
	Epoch       string `json:"epoch"`
	Length      string `json:"generation_length"`
	Generation  int64  `json:"generation"`
	// Ages, the youngest first: the window's generations, or fewer in a state
	// younger than its window (no generation before the epoch).
	Ages []AgeReport `json:"ages"`
	// Expired counts the slots of URLs that left the window or were
	// forgotten, free for new URLs (keyed-window).
	Expired *uint64 `json:"expired_slots,omitempty"`
}

// AgeReport is one live generation of a window: Age 0 is the current one.
type AgeReport struct {
	Age        int     `json:"age"`
	Generation int64   `json:"generation"`
	Started    string  `json:"started"`
	URLs       *uint64 `json:"urls,omitempty"`     // keyed-window: URLs stamped with it
	BitsSet    *uint64 `json:"bits_set,omitempty"` // bitmap-window: bits set in its bitmaps
	Fill       float64 `json:"fill"`               // of the state's slots, or of its 2^32 bits
}

// NewWindowReport is the window part of a report of window s at
// generation cur: its ages and when each started; their counts are the
// layout's to fill in.
func NewWindowReport(s window.Spec, cur int64) *WindowReport {
	w := &WindowReport{
		Window: window.FormatDuration(s.Window), Generations: s.Generations, Policy: s.Policy.String(),
		Epoch: s.Epoch.UTC().Format(time.RFC3339Nano), Length: window.FormatDuration(s.Length()), Generation: cur,
		Ages: make([]AgeReport, min(int64(s.Generations), max(cur+1, 1))), // no generation before the epoch
	}
	for age := range w.Ages {
		g := cur - int64(age)
		w.Ages[age] = AgeReport{Age: age, Generation: g, Started: s.Start(max(g, 0)).UTC().Format(time.RFC3339)}
	}
	return w
}

// CatchFault turns a memory fault inside a state's mapping (a shard file
// truncated under the process) into an error through fault (a
// shardfile.Dir's Fault), for a function that deferred it as
//
//	defer layout.CatchFault(dir.Fault, debug.SetPanicOnFault(true), &err)
//
// A panic that is not such a fault goes on.
func CatchFault(fault func(any) error, restore bool, errp *error) {
	debug.SetPanicOnFault(restore)
	r := recover()
	if r == nil {
		return
	}
	if err := fault(r); err != nil {
		*errp = err
		return
	}
	panic(r)
}

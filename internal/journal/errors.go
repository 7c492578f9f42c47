package journal

import "errors"

var (
	// ErrCorrupt is returned when a journal holds bytes that are not
	// frames before its end, or a header or epoch file that is not one.
	// The message names the file and the offset.
	ErrCorrupt = errors.New("journal corrupt")
	// ErrOtherState is returned for a journal file whose header names
	// another state than the directory's (a journal copied in from
	// elsewhere).
	ErrOtherState = errors.New("journal belongs to another state")
	// ErrTorn is what a warning wraps when a journal ends in a frame that
	// a crash cut short: it was never synced, so nothing was promised of
	// it, and replay goes on.
	ErrTorn = errors.New("journal ends in a torn frame")
	// ErrUnreplayed is what a read-only open is warned with when the
	// journals of writers that are gone hold decisions not yet replayed:
	// after a power loss, their URLs may answer new until a writable open
	// replays them.
	ErrUnreplayed = errors.New("journal not yet replayed")
)

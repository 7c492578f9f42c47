package dedupproto

import "sync/atomic"

// Counter names one of a node's counts.
type Counter int

// A node's counts. Hosts and centres count the ones that are theirs.
const (
	FramesSent    Counter = iota // frames sent to another node's inbox
	BytesSent                    // bytes of those frames
	SendFailures                 // attempts to send frames another node's Redis did not take
	OutboxDropped                // centre: frames dropped from an unreachable peer's full outbox
	URLsTaken                    // host: URLs taken from URL_pool
	URLsLocalDup                 // host: taken URLs its finish_URL held (the first pass)
	URLsSubmitted                // host: URLs submitted to the centre
	Answered                     // host: requests answered
	URLsHeld                     // host: URLs it marked held in its answers
	OwnDropped                   // host: requests carrying its own address, dropped as the paper says
	TasksFed                     // host: URLs moved from task_URL into its task_pool
	TasksDup                     // host: task_URL URLs its finish_URL already held
	TasksClaimed                 // host: task_URL entries taken over from a host that did not acknowledge them
	Malformed                    // frames refused (ErrMalformed), on either role
	Strangers                    // frames from an address that has no business sending them
	Repeats                      // frames received a second time (a re-sent submission or answer), ignored
	Answers                      // centre: answers merged into the frames they answer
	LateAnswers                  // centre: answers to a frame already completed
	Requests                     // centre: frames it asked its hosts about (its own and other networks')
	Completed                    // centre: frames of its hosts whose check ended
	Deadlines                    // centre: frames completed at their deadline with answers missing
	URLsRemoved                  // centre: URLs removed because another host or network held them
	URLsHandedOut                // centre: URLs put in task_URL
	numCounters
)

var counterInfo = [numCounters]struct{ name, help string }{
	FramesSent:    {"frames_sent", "frames sent to another node's inbox"},
	BytesSent:     {"bytes_sent", "bytes of the frames sent"},
	SendFailures:  {"send_failures", "attempts to send frames another node's Redis did not take"},
	OutboxDropped: {"outbox_dropped", "frames dropped from an unreachable peer's full outbox"},
	URLsTaken:     {"urls_taken", "URLs taken from URL_pool"},
	URLsLocalDup:  {"urls_local_dup", "URLs the host's finish_URL held before submission"},
	URLsSubmitted: {"urls_submitted", "URLs submitted to the centre"},
	Answered:      {"answered", "de-duplication requests answered"},
	URLsHeld:      {"urls_held", "URLs marked held in answers"},
	OwnDropped:    {"own_dropped", "requests carrying the host's own address, dropped"},
	TasksFed:      {"tasks_fed", "URLs moved from task_URL into task_pool"},
	TasksDup:      {"tasks_dup", "task_URL URLs finish_URL already held"},
	TasksClaimed:  {"tasks_claimed", "task_URL entries taken over from another host"},
	Malformed:     {"malformed", "frames refused as malformed"},
	Strangers:     {"strangers", "frames from an address with no business sending them"},
	Repeats:       {"repeats", "frames received a second time, ignored"},
	Answers:       {"answers", "answers merged into the frames they answer"},
	LateAnswers:   {"late_answers", "answers to frames already completed"},
	Requests:      {"requests", "frames the centre asked its hosts about"},
	Completed:     {"completed", "frames of the centre's hosts whose check ended"},
	Deadlines:     {"deadlines", "frames completed at their deadline with answers missing"},
	URLsRemoved:   {"urls_removed", "URLs removed because another host or network held them"},
	URLsHandedOut: {"urls_handed_out", "URLs put in task_URL"},
}

func (c Counter) String() string { return counterInfo[c].name }

// Help says what the counter counts.
func (c Counter) Help() string { return counterInfo[c].help }

// Stats are a node's counts, safe for concurrent use.
type Stats struct{ v [numCounters]atomic.Uint64 }

// Get returns the count of c.
func (s *Stats) Get(c Counter) uint64 { return s.v[c].Load() }

func (s *Stats) add(c Counter, n int) {
	if n > 0 {
		s.v[c].Add(uint64(n))
	}
}

// Each calls f for every counter, in order.
func (s *Stats) Each(f func(c Counter, v uint64)) {
	for c := Counter(0); c < numCounters; c++ {
		f(c, s.v[c].Load())
	}
}

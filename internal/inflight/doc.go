// Package inflight keeps several batches of decisions in flight to a remote
// backend, such as Redis, and hands the answers back in the order the
// batches were sent; at depth 0 it answers at once, for a local state.
//
// A round trip to a remote bitmap costs far more than the bits it sets, so
// a front end that waits for each batch before sending the next leaves both
// the network and the server idle. A Window sends up to its depth of
// batches at once, each on its own connection, and Recv returns them
// oldest first, so output stays in input order.
//
// # Order of answers
//
// Batches in flight run concurrently and may reach the server in any
// order. For different signatures that changes nothing: their bits are
// independent. For a signature that occurs in two batches in flight it
// would: the later occurrence could be decided first and be told "new".
// A Window therefore sends each signature at most once while it is in
// flight; every later occurrence, in the same batch or a later one, is a
// duplicate of the first and is answered so without a round trip. The
// answers are the ones a single sequential client would have received.
// In a dry run nothing is set, order cannot matter, and everything is sent.
//
// # Depth zero
//
// A local state answers at once: a Window of depth 0 decides each batch in
// Send, in the caller's goroutine, and holds it for Recv. Front ends
// (filter, the capture pipeline) thus have one loop, Send then Recv, for
// every state; the depth (state.Decider's InFlight) is the only
// difference.
package inflight

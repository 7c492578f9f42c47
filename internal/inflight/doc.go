// Package inflight keeps several batches of decisions in flight to a remote
// backend, such as Redis, and hands the answers back in the order the
// batches were sent.
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
package inflight

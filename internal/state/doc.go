// Package state opens "a state" wherever it is kept and gives every front
// end (filter, check, stats, init, replay, capture, serve, merge, snapshot,
// the API) one backend to decide against; State.Merge adds one state's
// URLs to another's, directory or Redis, for merge and migrate.
//
// A state is one layout (package layout: looked up in its registry by the
// state's format, never by a switch here) over one backend: a directory of
// shard files (package shardfile), or Redis or Redis Cluster (package
// redisstate), optionally behind a local cache directory that answers
// known duplicates without a round trip. Open tells them apart by the
// address: redis://, rediss://, redis-cluster:// or rediss-cluster:// is
// Redis, anything else a directory. Importing package state registers
// every layout of this build.
//
// # At once or in batches
//
// A local state answers in this process at memory speed; a remote one
// answers over the network, where a round trip costs far more than a
// decision. [State.InFlight] is the one place that says which: 0 means
// "decide each input as it comes", n ≥ 1 means "send batches, n of them in
// flight at once". Front ends (packages audit and linefilter, the daemon,
// the CLI) ask it, through the [Decider] interface, and nothing else.
package state

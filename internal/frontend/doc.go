// Package frontend holds what every front end of `urldedupd serve` shares:
// the FrontEnd interface the daemon runs a list of, and the pieces a
// protocol's server is built from, so that a front end is only its
// protocol (what a request is, how it is answered).
//
// # The pieces
//
//   - FrontEnd: Name, Serve, Drain, Shutdown. The daemon opens the
//     listeners (before it drops privileges), serves every front end,
//     and at shutdown drains them all, then shuts them down together
//     within the grace (WithGrace).
//   - ConnLimit: the connections served at once, across a front end's
//     listeners; beyond it new ones wait in the kernel's backlog. It
//     counts the waits and the peak, for the metrics and for returning
//     memory after a burst.
//   - Budget: the bytes requests hold at once (bodies, arguments, the
//     URLs' slices), with a share kept for each connection so that
//     stalled uploads never starve small requests.
//   - TokenMatches and CheckListen: a client's token compared in constant
//     time; a non-loopback address refused without remote access allowed
//     and a token.
//   - Observer and Metrics: every request reported by operation and
//     status, with its latency and the URLs found new and seen, as
//     urldedupd_<front end>_* metrics.
//
// # Adding a front end
//
// A front end (the next is a RESP server: AUTH, per-command metrics) is
// one package that implements FrontEnd over a state.State with these
// pieces, its listeners opened by the daemon (daemon.Config and
// daemon.open), and one line in the daemon's list (daemon.frontEnds).
package frontend

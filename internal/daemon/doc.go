// Package daemon runs `urldedupd serve`: capture sources writing first-seen
// requests to an event log, the HTTP API on a Unix socket and optionally
// TCP, and Prometheus metrics, over one shared state, until its context
// ends; then it stops the sources, drains in-flight requests and syncs the
// state.
package daemon

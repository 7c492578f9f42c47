// Package daemon runs `urldedupd serve`: capture sources writing first-seen
// requests to an event log, a list of front ends (the HTTP API, with the
// Prometheus metrics, on a Unix socket and optionally TCP), over one
// shared state, until its context ends; then it stops the sources, drains
// and shuts down the front ends (see package frontend) and syncs the
// state.
package daemon

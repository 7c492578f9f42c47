// Package layout is what every layout of a state shares, and the registry
// that finds a layout by its format id or its name.
//
// A layout is how a state's shard bytes are laid out and decided on: the
// patent's bitmap (package bitcheck), the keyed fingerprint table (package
// keyed) and the Bloom family (package bloomlayout: bloom, mdbf, dsbf).
// Each of those packages registers its layouts from an init function, the
// way restic's backends register their locations; package state looks a
// layout up by the state's format (format.Layout) and never switches on
// it. A program that opens states imports package state, which imports
// every layout of this build.
//
// The package holds the interface a layout implements (Layout), what a
// layout opened over a state directory offers (Local), the Decider every
// state and front end decides with, and the Report a state measures of
// itself.
package layout

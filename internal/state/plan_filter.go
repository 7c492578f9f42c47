package state

import "github.com/urldedupd/urldedupd/internal/bloomlayout"

// Defaults of the Bloom family's parameters, where neither the caller nor
// a plan chooses them (bloomlayout's).
const (
	DefaultBloomK   = bloomlayout.DefaultBloomK
	DefaultGroups   = bloomlayout.DefaultGroups
	DefaultMDBFK    = bloomlayout.DefaultMDBFK
	DefaultChildren = bloomlayout.DefaultChildren
	DefaultFMax     = bloomlayout.DefaultFMax
)

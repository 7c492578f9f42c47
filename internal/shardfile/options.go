package shardfile

import (
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
)

// Options configure Open. A nil *Options is the same as DefaultOptions.
type Options struct {
	// Create makes a new state when the directory holds none, creating the
	// directory itself if needed. When false, Open returns format.ErrNoState.
	Create bool

	// Spec, when non-nil, is the format the caller requires: Open returns
	// format.ErrMismatch for a state of another one, and Create uses it.
	// When nil, any existing format is accepted and a new state gets
	// format.Default.
	Spec *format.Spec

	// New, when non-nil, is the metadata Create gives a new state: its
	// spec (which must be Spec's when both are set), sizes, key id and
	// plan; its Created time is set when it is made. Nil is
	// format.NewMeta of Spec. For the Keyed layout New.Key is the secret
	// key, written to the key file (format.KeyName, mode 0600) and never
	// to the metadata.
	New *format.Meta

	// ReadOnly maps the shards read-only and opens no file for writing, so
	// a state on read-only storage can still be tested and counted.
	ReadOnly bool

	// LockTimeout bounds the wait for the directory lock. Zero waits
	// DefaultLockTimeout; a negative value fails at once if the lock is
	// taken.
	LockTimeout time.Duration

	// FlushInterval, when positive, writes dirty bits to disk (msync
	// MS_SYNC) in the background at this interval, bounding what a power
	// loss can take. Zero flushes only on Sync and Close.
	FlushInterval time.Duration

	// NoCloseSync makes Close leave the dirty bits to the kernel instead
	// of waiting until they are on disk. A process that exits, even by
	// SIGKILL, loses nothing either way (the bits are in the page cache);
	// a power loss or kernel crash within the kernel's writeback delay
	// (vm.dirty_expire_centisecs, 30 s by default) can lose the bits set
	// since, which makes their URLs new again. Waiting costs the writeback
	// of every page dirtied: on a fresh 512 MiB state, most of it.
	NoCloseSync bool

	// Populate maps every page of the shards at Open (Linux's
	// MADV_POPULATE_WRITE; read-only states are not populated), for a
	// process that stays: its first decisions take no page faults (about
	// 8% more URLs a second from a fresh start, docs/BENCHMARKS.md), and
	// a cold state is read at once rather than 4 KiB at a first touch.
	// It costs the reading of the state at Open (35 ms when it is in the
	// page cache) and shows the shards in the resident memory (RSS) of
	// the process: shared file pages, not the process's own. Best effort:
	// a kernel without it (before 5.14) maps pages at first touch.
	Populate bool

	// Warn, when non-nil, is told what Open accepted but a user should
	// know, at most once per Open: today, an error wrapping ErrUnallocated
	// when sparse shards were left unallocated on a file system without
	// fallocate. Nil says nothing.
	Warn func(error)
}

// DefaultLockTimeout is the lock wait used when Options.LockTimeout is zero.
const DefaultLockTimeout = 10 * time.Second

// DefaultOptions is used by Open for a nil *Options.
var DefaultOptions = &Options{}

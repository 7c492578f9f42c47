package shardfile

import "errors"

var (
	// ErrNotDir is returned when the state path exists but is not a
	// directory.
	ErrNotDir = errors.New("not a directory")
	// ErrIncomplete is returned when shard files exist without metadata
	// and without the creation marker (CreatingName), so that nothing
	// proves them a creation's own: a directory that is not a urldedupd
	// state, or a creation interrupted by an older version. A creation
	// interrupted now leaves its marker and is removed and made again.
	ErrIncomplete = errors.New("shard files without metadata")
	// ErrNotEmpty is returned when a state would be created in a directory
	// that holds no state but other files.
	ErrNotEmpty = errors.New("directory is not empty and holds no state")
	// ErrShardMissing is returned when a shard file is missing.
	ErrShardMissing = errors.New("shard file missing")
	// ErrNotRegular is returned when a shard or the metadata is not a
	// regular file: a symbolic link (never followed, wherever it points),
	// a directory, a device or a FIFO.
	ErrNotRegular = errors.New("not a regular file")
	// ErrFault is returned when a shard's mapped memory can no longer be
	// read or written: its file was truncated while mapped, or, for a
	// sparse file, the disk had no block left for a page (see Dir.Fault).
	ErrFault = errors.New("shard file shrank or lost its blocks while mapped (truncated by another process?)")
	// ErrSparse is returned when a shard opened for writing is sparse (its
	// blocks are not all allocated, as after truncate(1) or a copy that
	// kept holes) and allocating them failed: a write through the mapping
	// could then find the disk full, which is SIGBUS.
	ErrSparse = errors.New("sparse shard file, and its blocks could not be allocated")
	// ErrUnallocated is not returned by Open: it is what Options.Warn is
	// given when a writable Open left sparse shards as they are because
	// the file system cannot allocate blocks ahead (no fallocate:
	// EOPNOTSUPP or ENOSYS, as on ZFS before 2.2, NFSv3 or ramfs; on a
	// compressing file system a shard of zeros looks sparse). A bit set
	// there when the disk is full is ErrFault for its request.
	ErrUnallocated = errors.New("sparse shards left unallocated: the file system has no fallocate")
	// ErrLocked is returned when the lock could not be had within
	// Options.LockTimeout.
	ErrLocked = errors.New("state is locked by another process")
	// ErrNoSpace is returned when creation runs out of disk space. What
	// creation had made is removed again.
	ErrNoSpace = errors.New("no space left to create the state")
	// ErrClosed is returned by methods of a closed Dir.
	ErrClosed = errors.New("state is closed")
	// ErrReadOnly is returned when a write is asked of a Dir opened
	// read-only.
	ErrReadOnly = errors.New("state is open read-only")
)

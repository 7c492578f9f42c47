package bitcheck

import "runtime/debug"

// Every method that touches shard memory and returns an error catches a
// fault on the mapping (a shard truncated under this process) and returns
// it as shardfile.ErrFault naming the shard, instead of dying of SIGBUS:
//
//	defer s.catch(guard(), nil, &err)
//
// One defer per call, that is per batch: nothing per signature.

// guard makes a fault in this goroutine a panic, and returns the setting to
// restore.
func guard() bool { return debug.SetPanicOnFault(true) }

// catch restores the fault setting and turns a fault inside s's shards (or
// other's) into *errp. Any other panic goes on. It must be deferred
// directly, so that its recover sees the panic.
func (s *Set) catch(restore bool, other *Set, errp *error) {
	debug.SetPanicOnFault(restore)
	r := recover()
	if r == nil {
		return
	}
	for _, x := range []*Set{s, other} {
		if x != nil && x.dir != nil {
			if err := x.dir.Fault(r); err != nil {
				*errp = err
				return
			}
		}
	}
	panic(r)
}

package shardfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/racetest"
	"github.com/urldedupd/urldedupd/internal/shardfile"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func create(t *testing.T, f *format.Spec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	d, err := shardfile.Open(dir, &shardfile.Options{Create: true, Spec: f})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Created() {
		t.Fatal("Created() = false for a new state")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// digest hashes every file in dir, so a test can show nothing was changed.
func digest(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	for _, e := range ents {
		if e.IsDir() || e.Type()&os.ModeNamedPipe != 0 {
			fmt.Fprintf(h, "%s %v\n", e.Name(), e.Type()) // a FIFO would block a read
			continue
		}
		if e.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(filepath.Join(dir, e.Name()))
			fmt.Fprintf(h, "%s -> %s\n", e.Name(), target) // and what it points to, if anything
		}
		b, unmap, err := mapFile(filepath.Join(dir, e.Name()))
		if err != nil && e.Type()&os.ModeSymlink == 0 {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
		unmap()
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// mapFile maps the file at path (following links) read-only: its bytes
// as os.ReadFile would return them, without a copy through read(2), which
// the race detector checks byte by byte (reading a 512 MiB state twice
// took 20 s a test under -race, instead of well under a second).
func mapFile(path string) (b []byte, unmap func(), err error) {
	nop := func() {}
	f, err := os.Open(path)
	if err != nil {
		return nil, nop, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return nil, nop, err
	}
	b, err = unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nop, err
	}
	return b, func() { unix.Munmap(b) }, nil
}

func TestCreateAndReopen(t *testing.T) {
	f := &format.Spec{Algorithm: signature.Castagnoli, Mode: signature.None}
	dir := create(t, f)
	for i := 0; i < format.Shards; i++ {
		fi, err := os.Stat(filepath.Join(dir, format.ShardName(i)))
		if err != nil || fi.Size() != format.ShardBytes {
			t.Fatalf("shard %d: %v, %v", i, fi, err)
		}
	}
	d, err := shardfile.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Created() || d.Meta().Spec != *f || d.Meta().Version != format.Version {
		t.Fatalf("reopened: created=%v meta=%+v", d.Created(), d.Meta())
	}
	if len(d.Shard(0xff)) != format.ShardBytes {
		t.Fatalf("shard ff maps %d bytes", len(d.Shard(0xff)))
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// rewriteMeta replaces old with new in the metadata file, and fixes the
// checksum when fix is set.
func rewriteMeta(t *testing.T, dir, old, new string, fix bool) {
	t.Helper()
	p := filepath.Join(dir, shardfile.MetaName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), old, new, 1)
	if fix {
		body := s[:strings.LastIndex(s, "checksum ")]
		s = body + fmt.Sprintf("checksum %08x\n", crc32.ChecksumIEEE([]byte(body)))
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesBadState(t *testing.T) {
	racetest.SkipSequential(t)
	other := &format.Spec{Algorithm: signature.IEEE, Mode: signature.None}
	tests := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		opts   *shardfile.Options
		want   error
		where  string // the error must name this
	}{
		{"truncated shard", func(t *testing.T, dir string) {
			os.Truncate(filepath.Join(dir, "7f"), 1<<20)
		}, nil, format.ErrShardSize, "/7f"},
		{"grown shard", func(t *testing.T, dir string) {
			os.Truncate(filepath.Join(dir, "00"), format.ShardBytes+1)
		}, nil, format.ErrShardSize, "/00"},
		{"missing shard", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a0"))
		}, nil, shardfile.ErrShardMissing, "/a0"},
		{"shard is a directory", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a1"))
			os.Mkdir(filepath.Join(dir, "a1"), 0o755)
		}, nil, shardfile.ErrNotRegular, "/a1"},
		{"shard is a symlink to a valid shard outside", func(t *testing.T, dir string) {
			linkOutside(t, dir, "c3")
		}, nil, shardfile.ErrNotRegular, "/c3"},
		{"shard is a symlink, read-only", func(t *testing.T, dir string) {
			linkOutside(t, dir, "00")
		}, &shardfile.Options{ReadOnly: true}, shardfile.ErrNotRegular, "/00"},
		{"shard is a symlink to a shard inside", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "ff"))
			os.Symlink("fe", filepath.Join(dir, "ff"))
		}, nil, shardfile.ErrNotRegular, "/ff"},
		{"metadata is a symlink to valid metadata outside", func(t *testing.T, dir string) {
			linkOutside(t, dir, shardfile.MetaName)
		}, nil, shardfile.ErrNotRegular, shardfile.MetaName},
		{"metadata is a dangling symlink", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, shardfile.MetaName))
			os.Symlink("/nonexistent/meta", filepath.Join(dir, shardfile.MetaName))
		}, &shardfile.Options{Create: true}, shardfile.ErrNotRegular, shardfile.MetaName},
		{"metadata over 4096 bytes", func(t *testing.T, dir string) {
			p := filepath.Join(dir, shardfile.MetaName)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(bytes.Repeat([]byte("#"), 4097-len(b)), b...), 0o644)
		}, nil, format.ErrCorrupt, "over 4096 bytes is too large"},
		{"metadata is a FIFO", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, shardfile.MetaName))
			unix.Mkfifo(filepath.Join(dir, shardfile.MetaName), 0o644)
		}, nil, shardfile.ErrNotRegular, shardfile.MetaName},
		{"metadata is a directory", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, shardfile.MetaName))
			os.Mkdir(filepath.Join(dir, shardfile.MetaName), 0o755)
		}, nil, shardfile.ErrNotRegular, shardfile.MetaName},
		{"future version", func(t *testing.T, dir string) {
			rewriteMeta(t, dir, "urldedupd-state 1", "urldedupd-state 2", true)
		}, nil, format.ErrVersion, shardfile.MetaName},
		{"bad checksum", func(t *testing.T, dir string) {
			rewriteMeta(t, dir, "normalize safe", "normalize none", false)
		}, nil, format.ErrCorrupt, shardfile.MetaName},
		{"unknown layout", func(t *testing.T, dir string) {
			rewriteMeta(t, dir, "bitmap-1bit", "bloom-k3", true)
		}, nil, format.ErrLayout, shardfile.MetaName},
		{"unknown signature", func(t *testing.T, dir string) {
			rewriteMeta(t, dir, "signature crc32", "signature md5", true)
		}, nil, format.ErrLayout, shardfile.MetaName},
		{"empty metadata", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, shardfile.MetaName), nil, 0o644)
		}, nil, format.ErrCorrupt, shardfile.MetaName},
		{"format mismatch", func(t *testing.T, dir string) {}, &shardfile.Options{Spec: other},
			format.ErrMismatch, "normalize safe"},
		{"shards without metadata", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, shardfile.MetaName))
		}, &shardfile.Options{Create: true}, shardfile.ErrIncomplete, shardfile.MetaName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := create(t, nil)
			tt.break_(t, dir)
			before := digest(t, dir)
			d, err := shardfile.Open(dir, tt.opts)
			if err == nil {
				d.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.where) {
				t.Fatalf("Open error = %v; want %v naming %q", err, tt.want, tt.where)
			}
			if after := digest(t, dir); after != before {
				t.Fatal("Open changed the state's files")
			}
		})
	}
}

// linkOutside moves the state's file name out of the state directory and
// puts a symbolic link to it in its place: a valid file, reached by a link.
func linkOutside(t *testing.T, dir, name string) {
	t.Helper()
	outside := filepath.Join(t.TempDir(), name)
	if err := os.Rename(filepath.Join(dir, name), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func TestOpenMissingAndNotDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	if _, err := shardfile.Open(dir, nil); !errors.Is(err, format.ErrNoState) {
		t.Fatalf("missing dir: %v", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("Open without Create made the directory")
	}
	os.Mkdir(dir, 0o755)
	if _, err := shardfile.Open(dir, nil); !errors.Is(err, format.ErrNoState) {
		t.Fatalf("empty dir: %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, err := shardfile.Open(file, &shardfile.Options{Create: true}); !errors.Is(err, shardfile.ErrNotDir) {
		t.Fatalf("file: %v", err)
	}
}

func TestReadOnly(t *testing.T) {
	dir := create(t, nil)
	d, err := shardfile.Open(dir, &shardfile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.ReadOnly() || d.Shard(3)[100] != 0 {
		t.Fatal("read-only open")
	}
	if _, err := shardfile.Open(filepath.Join(t.TempDir(), "x"), &shardfile.Options{Create: true, ReadOnly: true}); !errors.Is(err, format.ErrNoState) {
		t.Fatalf("read-only create: %v", err)
	}
}

// Many openers racing to create one state: one creates it, all open it.
func TestConcurrentCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := shardfile.Open(dir, &shardfile.Options{Create: true})
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			if d.Created() {
				created++
			}
			mu.Unlock()
			time.Sleep(50 * time.Millisecond) // hold the shared lock a while
			errs <- d.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if created != 1 {
		t.Fatalf("%d openers created the state", created)
	}
}

// Creation needs the exclusive lock; a holder of it makes Open wait and
// then fail with ErrLocked.
func TestLockTimeout(t *testing.T) {
	dir := create(t, nil)
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = shardfile.Open(dir, &shardfile.Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, shardfile.ErrLocked) {
		t.Fatalf("Open under an exclusive lock: %v", err)
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("Open gave up before its timeout")
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	d, err := shardfile.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

func TestFlushInterval(t *testing.T) {
	dir := create(t, nil)
	d, err := shardfile.Open(dir, &shardfile.Options{FlushInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d.Shard(0)[0] = 1
	time.Sleep(50 * time.Millisecond)
	if err := d.FlushStats().Err; err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); !errors.Is(err, shardfile.ErrClosed) {
		t.Fatalf("Sync after Close: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "00"))
	if b[0] != 1 {
		t.Fatal("write through the mapping not in the file")
	}
}

// Every file and directory created follows the umask: 0644 and 0755 under
// umask 022 (other users can read the state), 0600 and 0700 under 077. The
// old code made the metadata 0644 and a snapshot directory 0755 whatever
// the umask.
func TestFileModes(t *testing.T) {
	for _, tc := range []struct {
		umask           int
		file, directory os.FileMode
	}{{0o022, 0o644, 0o755}, {0o077, 0o600, 0o700}, {0o002, 0o664, 0o775}} {
		t.Run(fmt.Sprintf("umask %03o", tc.umask), func(t *testing.T) {
			old := unix.Umask(tc.umask)
			defer unix.Umask(old)
			parent := filepath.Join(t.TempDir(), "made")
			dir := filepath.Join(parent, "state")
			d, err := shardfile.Open(dir, &shardfile.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			snap := filepath.Join(t.TempDir(), "snap")
			if err := d.Snapshot(snap); err != nil {
				t.Fatal(err)
			}
			want := map[string]os.FileMode{parent: tc.directory, dir: tc.directory, snap: tc.directory}
			for _, name := range []string{shardfile.MetaName, "00", "ff"} {
				want[filepath.Join(dir, name)] = tc.file
				want[filepath.Join(snap, name)] = tc.file
			}
			for p, mode := range want {
				fi, err := os.Stat(p)
				if err != nil || fi.Mode().Perm() != mode {
					t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode().Perm(), err, mode)
				}
			}
		})
	}
}

// Snapshot of a state whose shard was truncated under it fails with
// ErrFault naming the shard, and leaves no destination or temporary
// directory behind.
func TestSnapshotTruncatedShard(t *testing.T) {
	dir := create(t, nil)
	d, err := shardfile.Open(dir, &shardfile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Truncate(filepath.Join(dir, "80"), 0); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	err = d.Snapshot(filepath.Join(parent, "snap"))
	if !errors.Is(err, shardfile.ErrFault) || !strings.Contains(err.Error(), dir+"/80") {
		t.Fatalf("Snapshot: %v, want ErrFault naming %s/80", err, dir)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("left %s behind", ents[0].Name())
	}
}

// A snapshot directory whose writer still holds its lock is not stale:
// Snapshot leaves it; once the lock is gone, the next Snapshot removes it.
func TestSnapshotKeepsLockedTempDir(t *testing.T) {
	d, err := shardfile.Open(create(t, nil), &shardfile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	parent := t.TempDir()
	live := filepath.Join(parent, ".other.snapshot-12345678")
	os.Mkdir(live, 0o755)
	os.WriteFile(filepath.Join(live, "00"), []byte{0}, 0o644)
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := d.Snapshot(filepath.Join(parent, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(live, "00")); err != nil {
		t.Fatalf("a locked snapshot directory was touched: %v", err)
	}
	f.Close()
	if err := d.Snapshot(filepath.Join(parent, "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale snapshot directory still there: %v", err)
	}
}

// allocated is the disk space of a file, from st_blocks.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// A sparse 2 MiB shard (made by truncate) is left sparse by a read-only
// Open, and has its blocks allocated, content unchanged, by a writable one,
// so that setting a bit can never find the disk full (SIGBUS). The old code
// mapped it as it was.
func TestSparseShardIsFilled(t *testing.T) {
	dir := create(t, nil)
	p := filepath.Join(dir, "5a")
	os.Remove(p)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{0x80}, 12345) // one real byte among the holes
	f.Truncate(format.ShardBytes)
	f.Close()
	if n := allocated(t, p); n >= format.ShardBytes {
		t.Fatalf("test set-up: %d bytes allocated, not sparse", n)
	}
	ro, err := shardfile.Open(dir, &shardfile.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	if n := allocated(t, p); n >= format.ShardBytes {
		t.Fatalf("a read-only Open allocated the shard (%d bytes)", n)
	}
	d, err := shardfile.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if n := allocated(t, p); n < format.ShardBytes {
		t.Fatalf("after a writable Open: %d of %d bytes allocated", n, format.ShardBytes)
	}
	if b := d.Shard(0x5a); b[12345] != 0x80 || b[12344] != 0 || b[format.ShardBytes-1] != 0 {
		t.Fatal("filling changed the content")
	}
}

package format_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func TestKeyFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k")
	k := signature.Key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if err := format.WriteKeyFile(p, k); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v; want 0600", fi.Mode(), err)
	}
	got, err := format.ReadKeyFile(p)
	if err != nil || got != k {
		t.Fatalf("ReadKeyFile = %x, %v; want %x", got, err, k)
	}
	if err := format.WriteKeyFile(p, signature.Key{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteKeyFile over an existing file = %v, want fs.ErrExist", err)
	}
	if again, _ := format.ReadKeyFile(p); again != k {
		t.Fatal("an existing key file was rewritten")
	}
	if format.KeyID(k) == format.KeyID(signature.Key{}) || len(format.KeyID(k)) != 16 {
		t.Errorf("KeyID %q", format.KeyID(k))
	}
}

// TestKeyFileRefused: every bad key file is refused with ErrKey and its
// path in the message.
func TestKeyFileRefused(t *testing.T) {
	good := string(format.MarshalKey(signature.Key{9}))
	tests := []struct {
		name, data string
		mode       os.FileMode
	}{
		{"empty", "", 0o600},
		{"truncated", good[:30], 0o600},
		{"no newline", strings.TrimSuffix(good, "\n"), 0o600},
		{"not hex", strings.Replace(good, "09", "zz", 1), 0o600},
		{"raw bytes", string(make([]byte, 16)), 0o600},
		{"trailing junk", good + "x\n", 0o600},
		{"world readable", good, 0o644},
		{"group writable", good, 0o620},
		{"huge", good + strings.Repeat("x", 1000), 0o600},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(p, []byte(tt.data), tt.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, tt.mode); err != nil {
			t.Fatal(err)
		}
		_, err := format.ReadKeyFile(p)
		if !errors.Is(err, format.ErrKey) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: ReadKeyFile = %v, want ErrKey naming %s", tt.name, err, p)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	target := filepath.Join(t.TempDir(), "key")
	os.WriteFile(target, []byte(good), 0o600)
	os.Symlink(target, link)
	if _, err := format.ReadKeyFile(link); !errors.Is(err, format.ErrKey) || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("ReadKeyFile(symlink) = %v, want ErrKey naming it a symbolic link", err)
	}
}

func FuzzParseKey(f *testing.F) {
	f.Add(format.MarshalKey(signature.Key{1}))
	f.Add([]byte("urldedupd-key 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := format.ParseKey(data)
		if err != nil {
			if !errors.Is(err, format.ErrKey) {
				t.Fatalf("ParseKey error %v is not ErrKey", err)
			}
			return
		}
		if string(format.MarshalKey(k)) != string(data) {
			t.Fatalf("ParseKey accepted %q, which is not MarshalKey of its key", data)
		}
	})
}

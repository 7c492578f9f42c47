package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// KeyName is the key file's name inside a keyed state directory.
const KeyName = "urldedupd.key"

const keyMagic = "urldedupd-key 1"

// maxKeyFileBytes bounds what is read of a key file: a real one is 49
// bytes.
const maxKeyFileBytes = 256

// KeyID returns the identity of key k written in a keyed state's metadata:
// 16 hex digits of SHA-256 over a label and the key. It tells keys apart
// and tells nothing of the key.
func KeyID(k signature.Key) string {
	h := sha256.New()
	h.Write([]byte("urldedupd key id\x00"))
	h.Write(k[:])
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// MarshalKey encodes k as a key file's bytes: "urldedupd-key 1", a
// newline, 32 hex digits and a newline.
func MarshalKey(k signature.Key) []byte {
	return []byte(keyMagic + "\n" + hex.EncodeToString(k[:]) + "\n")
}

// ParseKey decodes a key file's bytes; anything else is ErrKey.
func ParseKey(data []byte) (signature.Key, error) {
	var k signature.Key
	magic, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(magic) != keyMagic {
		return k, fmt.Errorf("%w: not a urldedupd key file (want a first line %q)", ErrKey, keyMagic)
	}
	h := bytes.TrimSuffix(rest, []byte("\n"))
	if len(h) != 2*signature.KeySize || len(rest) != len(h)+1 {
		return k, fmt.Errorf("%w: want %d hex digits and a newline after the first line", ErrKey, 2*signature.KeySize)
	}
	if _, err := hex.Decode(k[:], h); err != nil || hex.EncodeToString(k[:]) != string(h) {
		return k, fmt.Errorf("%w: want %d lower-case hex digits", ErrKey, 2*signature.KeySize)
	}
	return k, nil
}

// ReadKeyFile reads the key file at path. A file that is not a regular
// file, that others than its owner can read or write (like ssh, it is a
// secret), or that does not parse is refused with an error naming it.
func ReadKeyFile(path string) (signature.Key, error) {
	var k signature.Key
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// O_NOFOLLOW's ELOOP ("too many levels of symbolic links") says it poorly.
			return k, fmt.Errorf("key file %s: %w: a symbolic link (want a regular file)", path, ErrKey)
		}
		return k, fmt.Errorf("key file %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return k, fmt.Errorf("key file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return k, fmt.Errorf("key file %s: %w: mode %v (want a regular file)", path, ErrKey, fi.Mode())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return k, fmt.Errorf("key file %s: %w: mode %v lets others than its owner read or write the secret key (chmod 600 %s)",
			path, ErrKey, fi.Mode().Perm(), path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return k, fmt.Errorf("key file %s: %w", path, err)
	}
	if len(data) > maxKeyFileBytes {
		return k, fmt.Errorf("key file %s: %w: over %d bytes", path, ErrKey, maxKeyFileBytes)
	}
	if k, err = ParseKey(data); err != nil {
		return k, fmt.Errorf("key file %s: %w", path, err)
	}
	return k, nil
}

// WriteKeyFile writes k to a new file at path, mode 0600, and syncs it.
// It never replaces a file: one that exists is fs.ErrExist.
func WriteKeyFile(path string, k signature.Key) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("key file %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(path)
		}
	}()
	_, err = f.Write(MarshalKey(k))
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("key file %s: %w", path, err)
	}
	return nil
}

// CheckKey returns an error wrapping ErrMismatch, naming where the key
// came from, unless k is the key of a state of metadata m.
func (m Meta) CheckKey(from string, k signature.Key) error {
	if id := KeyID(k); id != m.KeyID {
		return fmt.Errorf("%s: %w: key id %s, but the state was made with key id %s", from, ErrMismatch, id, m.KeyID)
	}
	return nil
}

// KeyPath returns the key file of the state directory dir.
func KeyPath(dir string) string { return filepath.Join(dir, KeyName) }

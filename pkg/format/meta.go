package format

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"

	"github.com/urldedupd/urldedupd/pkg/signature"
)

// Version is the metadata format this build writes and reads.
const Version = 1

// MaxMetaBytes is the largest metadata text a reader need accept; a real
// one is about 200 bytes.
const MaxMetaBytes = 4096

const metaMagic = "urldedupd-state"

// Meta is a state's metadata: everything needed to read its bits.
type Meta struct {
	Version  int
	Spec     Spec
	BitOrder string
	Sizes    Sizes
	// KeyID identifies the secret key of a keyed layout (a fingerprint,
	// never the key). Empty for Bitmap, which has no key; no layout of
	// this build has one.
	KeyID   string
	Created time.Time
}

// NewMeta returns the metadata of a new state of spec s, with the layout's
// default sizes.
func NewMeta(s Spec, now time.Time) Meta {
	return Meta{
		Version: Version, Spec: s, BitOrder: BitOrder,
		Sizes: DefaultSizes, Created: now.UTC().Truncate(time.Second),
	}
}

// Require returns an error wrapping ErrMismatch unless the state's spec is
// want. where names the state in the message.
func (m Meta) Require(where string, want Spec) error {
	if m.Spec == want {
		return nil
	}
	return fmt.Errorf("%s: %w: state has %s; asked for %s", where, ErrMismatch, m.Spec, want)
}

// Compatible returns an error wrapping ErrMismatch unless states of
// metadata m and o hold bits that mean the same thing, so that one can be
// merged into or copied to the other: the same spec, sizes and key.
func (m Meta) Compatible(o Meta) error {
	switch {
	case m.Spec != o.Spec:
		return fmt.Errorf("%w: %s; the other has %s", ErrMismatch, m.Spec, o.Spec)
	case m.Sizes != o.Sizes:
		return fmt.Errorf("%w: %d shards of %d bytes; the other has %d of %d", ErrMismatch,
			m.Sizes.Shards, m.Sizes.ShardBytes, o.Sizes.Shards, o.Sizes.ShardBytes)
	case m.KeyID != o.KeyID:
		return fmt.Errorf("%w: the states have different keys", ErrMismatch)
	}
	return nil
}

// MarshalText encodes m as the metadata file's bytes.
func (m Meta) MarshalText() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %d\n", metaMagic, m.Version)
	fmt.Fprintf(&b, "layout %s\n", m.Spec.Layout)
	fmt.Fprintf(&b, "signature %s\n", m.Spec.Algorithm)
	fmt.Fprintf(&b, "normalize %s\n", m.Spec.Mode)
	fmt.Fprintf(&b, "bit-order %s\n", m.BitOrder)
	fmt.Fprintf(&b, "shards %d\n", m.Sizes.Shards)
	fmt.Fprintf(&b, "shard-bytes %d\n", m.Sizes.ShardBytes)
	if m.KeyID != "" {
		fmt.Fprintf(&b, "key-id %s\n", m.KeyID)
	}
	fmt.Fprintf(&b, "created %s\n", m.Created.Format(time.RFC3339))
	fmt.Fprintf(&b, "checksum %08x\n", crc32.ChecksumIEEE(b.Bytes()))
	return b.Bytes(), nil
}

// UnmarshalText decodes and validates metadata: the checksum (ErrCorrupt),
// then the version (ErrVersion), then the layout, bit order and sizes
// (ErrLayout).
func (m *Meta) UnmarshalText(data []byte) error {
	body, sum, err := splitChecksum(data)
	if err != nil {
		return err
	}
	if got := crc32.ChecksumIEEE(body); got != sum {
		return fmt.Errorf("%w: checksum is %08x, content sums to %08x", ErrCorrupt, sum, got)
	}
	fields := map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(string(body), "\n"), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			return fmt.Errorf("%w: line %d: %q has no value", ErrCorrupt, i+1, line)
		}
		fields[k] = v
	}
	ver, ok := fields[metaMagic]
	if !ok {
		return fmt.Errorf("%w: not a urldedupd metadata file", ErrCorrupt)
	}
	if m.Version, err = strconv.Atoi(ver); err != nil || m.Version != Version {
		return fmt.Errorf("%w: %q (this build reads version %d)", ErrVersion, ver, Version)
	}
	return m.decodeFields(fields)
}

func splitChecksum(data []byte) (body []byte, sum uint32, err error) {
	i := bytes.LastIndex(data, []byte("\nchecksum "))
	if i < 0 || !bytes.HasSuffix(data, []byte("\n")) {
		return nil, 0, fmt.Errorf("%w: no checksum line", ErrCorrupt)
	}
	hex := string(bytes.TrimSpace(data[i+len("\nchecksum "):]))
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || len(hex) != 8 {
		return nil, 0, fmt.Errorf("%w: bad checksum %q", ErrCorrupt, hex)
	}
	return data[:i+1], uint32(v), nil
}

func (m *Meta) decodeFields(f map[string]string) error {
	var err error
	if m.Spec.Algorithm, err = signature.ParseAlgorithm(f["signature"]); err != nil {
		return fmt.Errorf("%w: %w", ErrLayout, err)
	}
	if m.Spec.Mode, err = signature.ParseMode(f["normalize"]); err != nil {
		return fmt.Errorf("%w: %w", ErrLayout, err)
	}
	if m.Spec.Layout, err = ParseLayout(f["layout"]); err != nil {
		return err
	}
	m.BitOrder = f["bit-order"]
	m.Sizes.Shards, _ = strconv.Atoi(f["shards"])
	m.Sizes.ShardBytes, _ = strconv.ParseInt(f["shard-bytes"], 10, 64)
	m.KeyID = f["key-id"]
	if m.BitOrder != BitOrder {
		return fmt.Errorf("%w: bit order %q", ErrLayout, m.BitOrder)
	}
	if err := m.Spec.Layout.CheckSizes(m.Sizes); err != nil {
		return err
	}
	if m.KeyID != "" {
		return fmt.Errorf("%w: layout %s has no key, but a key-id is given", ErrLayout, m.Spec.Layout)
	}
	if m.Created, err = time.Parse(time.RFC3339, f["created"]); err != nil {
		return fmt.Errorf("%w: created: %v", ErrCorrupt, err)
	}
	return nil
}

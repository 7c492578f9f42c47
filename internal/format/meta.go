package format

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"

	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/window"
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
	// KeyID identifies the secret key of the Keyed layout (see KeyID; never
	// the key). Empty for Bitmap, which has no key.
	KeyID string
	// Key is the Keyed layout's secret key itself, in the metadata of a
	// state in Redis only (a state directory keeps it in its own file,
	// mode 0600; see KeyName). Nil elsewhere.
	Key *signature.Key
	// Capacity and FalseDup are the plan a state was sized for at init
	// (init --capacity N --false-dup P): the distinct URLs it should hold
	// with a chance of at most FalseDup that the next new one is reported
	// a duplicate. Zero when it was not planned.
	Capacity uint64
	FalseDup float64
	// Filter are the parameters of the Bloom family's layouts (Bloom,
	// MDBF, DSBF); zero for the others.
	Filter Filter
	// Window is the time window of the windowed layouts (KeyedWindow,
	// BitmapWindow): its epoch, length, generations and policy, from
	// which every process computes the current generation. Zero for the
	// others.
	Window  window.Spec
	Created time.Time
}

// NewMeta returns the metadata of a new state of spec s, with the default
// sizes (the Bitmap layout's, the smallest Keyed one).
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
	case m.Filter != o.Filter:
		return fmt.Errorf("%w: filter %+v; the other has %+v", ErrMismatch, m.Filter, o.Filter)
	case !m.Window.Epoch.Equal(o.Window.Epoch) || m.Window.Window != o.Window.Window ||
		m.Window.Generations != o.Window.Generations || m.Window.Policy != o.Window.Policy:
		return fmt.Errorf("%w: %s; the other has %s", ErrMismatch, describeWindow(m.Window), describeWindow(o.Window))
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
	if m.Key != nil {
		fmt.Fprintf(&b, "key %x\n", m.Key[:])
	}
	m.Filter.marshal(func(k string, v any) { fmt.Fprintf(&b, "%s %v\n", k, v) })
	if w := m.Window; w.Generations != 0 {
		fmt.Fprintf(&b, "window %s\n", window.FormatDuration(w.Window))
		fmt.Fprintf(&b, "generations %d\n", w.Generations)
		fmt.Fprintf(&b, "policy %s\n", w.Policy)
		fmt.Fprintf(&b, "epoch %s\n", w.Epoch.UTC().Format(time.RFC3339Nano))
	}
	if m.Capacity != 0 {
		fmt.Fprintf(&b, "capacity %d\n", m.Capacity)
		fmt.Fprintf(&b, "false-dup %s\n", strconv.FormatFloat(m.FalseDup, 'g', -1, 64))
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
	if err := m.Spec.Layout.checkAlgorithm(m.Spec.Algorithm); err != nil {
		return err
	}
	if err := m.Spec.Layout.CheckSizes(m.Sizes); err != nil {
		return err
	}
	if err := m.Filter.unmarshal(f); err != nil {
		return err
	}
	if err := m.Spec.Layout.CheckFilter(m.Filter, m.Sizes); err != nil {
		return err
	}
	if err := m.decodeKey(f); err != nil {
		return err
	}
	if err := m.decodeWindow(f); err != nil {
		return err
	}
	if err := m.decodePlan(f); err != nil {
		return err
	}
	if m.Created, err = time.Parse(time.RFC3339, f["created"]); err != nil {
		return fmt.Errorf("%w: created: %v", ErrCorrupt, err)
	}
	return nil
}

func (m *Meta) decodeKey(f map[string]string) error {
	keyed := m.Spec.Layout.Keyed()
	switch {
	case !keyed && (m.KeyID != "" || f["key"] != ""):
		return fmt.Errorf("%w: layout %s has no key, but a key is given", ErrLayout, m.Spec.Layout)
	case keyed && !isKeyID(m.KeyID):
		return fmt.Errorf("%w: layout %s needs a key-id of 16 hex digits, has %q", ErrCorrupt, m.Spec.Layout, m.KeyID)
	case f["key"] == "":
		return nil
	}
	var k signature.Key
	if n, err := hex.Decode(k[:], []byte(f["key"])); err != nil || n != len(k) || len(f["key"]) != 2*len(k) {
		return fmt.Errorf("%w: key: want %d hex digits", ErrCorrupt, 2*len(k))
	}
	if KeyID(k) != m.KeyID {
		return fmt.Errorf("%w: the key does not have the key-id %s", ErrCorrupt, m.KeyID)
	}
	m.Key = &k
	return nil
}

func isKeyID(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 16 && err == nil
}

func (m *Meta) decodeWindow(f map[string]string) error {
	given := f["window"] != "" || f["generations"] != "" || f["policy"] != "" || f["epoch"] != ""
	switch l := m.Spec.Layout; {
	case !l.Windowed() && given:
		return fmt.Errorf("%w: layout %s has no window, but a window is given", ErrLayout, l)
	case !l.Windowed():
		return nil
	}
	var w window.Spec
	var err error
	if w.Window, err = window.ParseDuration(f["window"]); err != nil {
		return fmt.Errorf("%w: window: %w", ErrCorrupt, err)
	}
	if w.Generations, err = strconv.Atoi(f["generations"]); err != nil {
		return fmt.Errorf("%w: generations %q", ErrCorrupt, f["generations"])
	}
	if w.Policy, err = window.ParsePolicy(f["policy"]); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if w.Epoch, err = time.Parse(time.RFC3339Nano, f["epoch"]); err != nil {
		return fmt.Errorf("%w: epoch: %v", ErrCorrupt, err)
	}
	m.Window = w
	return m.checkWindow()
}

// checkWindow returns an error unless the window suits the layout and
// its sizes: valid, and on BitmapWindow one bitmap a generation and one
// more.
func (m Meta) checkWindow() error {
	l, w := m.Spec.Layout, m.Window
	switch {
	case !l.Windowed() && w != (window.Spec{}):
		return fmt.Errorf("%w: layout %s has no window", ErrLayout, l)
	case !l.Windowed():
		return nil
	}
	if err := w.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrLayout, err)
	}
	if l == BitmapWindow && m.Sizes.ShardBytes != RingShardBytes(w.Generations) {
		return fmt.Errorf("%w: shards of %d bytes for %d generations (want %d)", ErrLayout,
			m.Sizes.ShardBytes, w.Generations, RingShardBytes(w.Generations))
	}
	return nil
}

// describeWindow says a window as the messages do.
func describeWindow(w window.Spec) string {
	if w.Generations == 0 {
		return "no window"
	}
	return fmt.Sprintf("a window of %s in %d generations (%s) from %s", window.FormatDuration(w.Window),
		w.Generations, w.Policy, w.Epoch.UTC().Format(time.RFC3339Nano))
}

func (m *Meta) decodePlan(f map[string]string) error {
	c, p := f["capacity"], f["false-dup"]
	if c == "" && p == "" {
		return nil
	}
	var err error
	if m.Capacity, err = strconv.ParseUint(c, 10, 64); err != nil || m.Capacity == 0 {
		return fmt.Errorf("%w: capacity %q", ErrCorrupt, c)
	}
	if m.FalseDup, err = strconv.ParseFloat(p, 64); err != nil || !(m.FalseDup > 0 && m.FalseDup < 1) {
		return fmt.Errorf("%w: false-dup %q", ErrCorrupt, p)
	}
	return nil
}

// Creating returns the metadata of a state being created now: that of
// asked (its spec, sizes, key and plan) when not nil, else NewMeta of spec
// (Default when nil). When both are given they must agree (ErrMismatch).
// The sizes must suit the layout (ErrLayout); a Keyed state must come with
// its key (ErrKey), whose id it records.
func Creating(spec *Spec, asked *Meta, now time.Time) (Meta, error) {
	s := Default
	if spec != nil {
		s = *spec
	}
	m := NewMeta(s, now)
	if asked != nil {
		if spec != nil && asked.Spec != *spec {
			return m, fmt.Errorf("%w: asked to create %s as %s", ErrMismatch, asked.Spec, *spec)
		}
		m.Spec, m.Sizes, m.Key, m.Capacity, m.FalseDup = asked.Spec, asked.Sizes, asked.Key, asked.Capacity, asked.FalseDup
		m.Filter, m.Window = asked.Filter, asked.Window
	}
	if err := m.Spec.Layout.CheckSizes(m.Sizes); err != nil {
		return m, err
	}
	if err := m.Spec.Layout.CheckFilter(m.Filter, m.Sizes); err != nil {
		return m, err
	}
	if err := m.checkWindow(); err != nil {
		return m, err
	}
	if m.Spec.Layout.Keyed() {
		if m.Key == nil {
			return m, fmt.Errorf("%w: a keyed state needs its key to be created", ErrKey)
		}
		m.KeyID = KeyID(*m.Key)
	}
	return m, nil
}

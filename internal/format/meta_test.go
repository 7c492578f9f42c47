package format_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/format"
	"github.com/urldedupd/urldedupd/internal/signature"
)

func TestMetaGolden(t *testing.T) {
	golden, err := os.ReadFile("testdata/meta-v1.golden")
	if err != nil {
		t.Fatal(err)
	}
	var m format.Meta
	if err := m.UnmarshalText(golden); err != nil {
		t.Fatal(err)
	}
	if m.Spec != format.Default || m.Sizes != format.DefaultSizes || m.Created.Format(time.RFC3339) != "2026-11-22T14:00:00Z" {
		t.Fatalf("decoded %+v", m)
	}
	out, _ := m.MarshalText()
	if !bytes.Equal(out, golden) {
		t.Fatalf("MarshalText =\n%s\nwant\n%s", out, golden)
	}
}

func TestLayoutNames(t *testing.T) {
	for _, l := range format.Layouts {
		for _, name := range []string{l.String(), l.Name()} {
			got, err := format.ParseLayout(name)
			if err != nil || got != l {
				t.Errorf("ParseLayout(%q) = %v, %v", name, got, err)
			}
		}
	}
	if _, err := format.ParseLayout("cuckoo"); !errors.Is(err, format.ErrLayout) {
		t.Errorf("ParseLayout(cuckoo) = %v, want ErrLayout", err)
	}
}

func TestCheckSizes(t *testing.T) {
	tests := []struct {
		s  format.Sizes
		ok bool
	}{
		{format.DefaultSizes, true},
		{format.Sizes{Shards: 256, ShardBytes: 4 << 20}, false}, // bitmap: one bit per 32-bit signature, no more
		{format.Sizes{Shards: 128, ShardBytes: 2 << 20}, false},
		{format.Sizes{}, false},
	}
	for _, tt := range tests {
		err := format.Bitmap.CheckSizes(tt.s)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, format.ErrLayout) {
			t.Errorf("CheckSizes(%+v) = %v, want ok=%v", tt.s, err, tt.ok)
		}
	}
	keyed := []struct {
		s  format.Sizes
		ok bool
	}{
		{format.DefaultSizes, true},
		{format.Sizes{Shards: 256, ShardBytes: 32 << 20}, true},
		{format.Sizes{Shards: 256, ShardBytes: 1 << 30}, true},
		{format.Sizes{Shards: 256, ShardBytes: 2 << 30}, false}, // past what 24 bucket bits address
		{format.Sizes{Shards: 256, ShardBytes: 1 << 20}, false}, // under 2 MiB
		{format.Sizes{Shards: 256, ShardBytes: 3 << 20}, false}, // not a power of two
		{format.Sizes{Shards: 255, ShardBytes: 4 << 20}, false},
	}
	for _, tt := range keyed {
		err := format.Keyed.CheckSizes(tt.s)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, format.ErrLayout) {
			t.Errorf("Keyed.CheckSizes(%+v) = %v, want ok=%v", tt.s, err, tt.ok)
		}
	}
}

// TestMismatch checks the one mismatch error: what Require and Compatible
// refuse wraps ErrMismatch and names both sides; what they accept is nil.
func TestMismatch(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	safe := format.NewMeta(format.Default, now)
	none := format.NewMeta(format.Spec{Algorithm: signature.IEEE, Mode: signature.None}, now)
	if err := safe.Require("here", format.Default); err != nil {
		t.Errorf("Require(same) = %v", err)
	}
	err := safe.Require("here", none.Spec)
	if !errors.Is(err, format.ErrMismatch) || !strings.Contains(err.Error(), "normalize safe") || !strings.Contains(err.Error(), "normalize none") {
		t.Errorf("Require(other) = %v", err)
	}
	if err := safe.Compatible(format.NewMeta(format.Default, now.Add(time.Hour))); err != nil {
		t.Errorf("Compatible(same spec, other time) = %v", err)
	}
	if err := safe.Compatible(none); !errors.Is(err, format.ErrMismatch) {
		t.Errorf("Compatible(other mode) = %v", err)
	}
	k1 := format.NewMeta(format.KeyedSpec(signature.Safe), now)
	k1.KeyID = format.KeyID(signature.Key{1})
	k2 := k1
	k2.KeyID = format.KeyID(signature.Key{2})
	if err := k1.Compatible(k2); !errors.Is(err, format.ErrMismatch) || !strings.Contains(err.Error(), "keys") {
		t.Errorf("Compatible(other key) = %v", err)
	}
	if err := safe.Compatible(k1); !errors.Is(err, format.ErrMismatch) || !strings.Contains(err.Error(), "layout keyed") {
		t.Errorf("Compatible(other layout) = %v", err)
	}
	big := k1
	big.Sizes.ShardBytes *= 4
	if err := k1.Compatible(big); !errors.Is(err, format.ErrMismatch) {
		t.Errorf("Compatible(other size) = %v", err)
	}
}

// TestMetaRefusesKeyOnBitmap: a bitmap state has no key, so a key-id line
// is a metadata this build cannot read.
func TestMetaRefusesKeyOnBitmap(t *testing.T) {
	m := format.NewMeta(format.Default, time.Now())
	m.KeyID = "0123"
	text, _ := m.MarshalText()
	var back format.Meta
	if err := back.UnmarshalText(text); !errors.Is(err, format.ErrLayout) {
		t.Fatalf("UnmarshalText(bitmap with key-id) = %v, want ErrLayout", err)
	}
}

// TestKeyedMeta: a keyed state's metadata round-trips with its key id,
// its plan, and (in Redis) its key; a key that does not match its id, a
// missing key id, or a CRC signature on the keyed layout is refused.
func TestKeyedMeta(t *testing.T) {
	k := signature.Key{0: 7, 15: 9}
	m := format.NewMeta(format.KeyedSpec(signature.Safe), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	m.Sizes.ShardBytes = 8 << 20
	m.KeyID = format.KeyID(k)
	m.Capacity, m.FalseDup = 100_000_000, 1e-6
	for _, withKey := range []bool{false, true} {
		mm := m
		if withKey {
			mm.Key = &k
		}
		text, _ := mm.MarshalText()
		if withKey != strings.Contains(string(text), "\nkey ") {
			t.Fatalf("key line present = %v, want %v:\n%s", !withKey, withKey, text)
		}
		var back format.Meta
		if err := back.UnmarshalText(text); err != nil {
			t.Fatalf("UnmarshalText: %v\n%s", err, text)
		}
		if back.Spec != mm.Spec || back.Sizes != mm.Sizes || back.KeyID != mm.KeyID || back.Capacity != mm.Capacity ||
			back.FalseDup != mm.FalseDup || (back.Key == nil) != !withKey || withKey && *back.Key != k {
			t.Errorf("round trip: %+v, want %+v", back, mm)
		}
	}
	bad := []struct {
		name string
		edit func(*format.Meta)
		want error
	}{
		{"no key id", func(m *format.Meta) { m.KeyID = "" }, format.ErrCorrupt},
		{"key of another id", func(m *format.Meta) { m.Key = &signature.Key{1} }, format.ErrCorrupt},
		{"crc32 on keyed", func(m *format.Meta) { m.Spec.Algorithm = signature.IEEE }, format.ErrLayout},
		{"siphash on bitmap", func(m *format.Meta) { m.Spec.Layout, m.KeyID, m.Sizes = format.Bitmap, "", format.DefaultSizes }, format.ErrLayout},
		{"odd size", func(m *format.Meta) { m.Sizes.ShardBytes = 3 << 20 }, format.ErrLayout},
	}
	for _, tt := range bad {
		mm := m
		tt.edit(&mm)
		text, _ := mm.MarshalText()
		var back format.Meta
		if err := back.UnmarshalText(text); !errors.Is(err, tt.want) {
			t.Errorf("%s: UnmarshalText = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// Creating: the metadata a new state gets, and what it refuses.
func TestCreating(t *testing.T) {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	k := signature.Key{5}
	keyed := format.NewMeta(format.KeyedSpec(signature.Safe), now)
	keyed.Sizes.ShardBytes, keyed.Key, keyed.Capacity, keyed.FalseDup = 8<<20, &k, 1000, 0.01
	m, err := format.Creating(nil, &keyed, now)
	if err != nil || m.KeyID != format.KeyID(k) || m.Sizes != keyed.Sizes || m.Capacity != 1000 || m.Spec != keyed.Spec {
		t.Fatalf("Creating(keyed) = %+v, %v", m, err)
	}
	if m, err := format.Creating(nil, nil, now); err != nil || m.Spec != format.Default || m.Sizes != format.DefaultSizes {
		t.Fatalf("Creating(nil, nil) = %+v, %v", m, err)
	}
	noKey := keyed
	noKey.Key = nil
	odd := keyed
	odd.Sizes.ShardBytes = 3 << 20
	for _, tt := range []struct {
		name  string
		spec  *format.Spec
		asked *format.Meta
		want  error
	}{
		{"spec and asked disagree", &format.Default, &keyed, format.ErrMismatch},
		{"keyed without its key", nil, &noKey, format.ErrKey},
		{"a size the layout cannot have", nil, &odd, format.ErrLayout},
	} {
		if _, err := format.Creating(tt.spec, tt.asked, now); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

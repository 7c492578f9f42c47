package format_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/pkg/format"
	"github.com/urldedupd/urldedupd/pkg/signature"
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
	for _, l := range []format.Layout{format.Bitmap} {
		got, err := format.ParseLayout(l.String())
		if err != nil || got != l {
			t.Errorf("ParseLayout(%q) = %v, %v", l.String(), got, err)
		}
	}
	if _, err := format.ParseLayout("keyed"); !errors.Is(err, format.ErrLayout) {
		t.Errorf("ParseLayout(keyed) = %v, want ErrLayout (this build has no keyed layout)", err)
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
	keyed := safe
	keyed.KeyID = "k1"
	if err := safe.Compatible(keyed); !errors.Is(err, format.ErrMismatch) || !strings.Contains(err.Error(), "keys") {
		t.Errorf("Compatible(other key) = %v", err)
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

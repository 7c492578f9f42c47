package format

import (
	"fmt"
	"strconv"
)

// Filter are the parameters of a state of the Bloom family (layouts
// Bloom, MDBF and DSBF), fixed at init and kept in the metadata. The zero
// Filter is that of every other layout.
type Filter struct {
	// K is the positions a URL sets: in the Bloom filter, in its MDBF
	// group (K − 1 in V1, 1 in V2), in a DSBF leaf.
	K int
	// Groups is MDBF's S.
	Groups int
	// V1Bits is MDBF's N, the bits of each group's V1: a multiple of 64·K,
	// so that V2, of N/K bits, is whole words.
	V1Bits uint64
	// Children is DSBF's c: the leaves of the first level, and the
	// children of a split leaf.
	Children int
	// FMax is DSBF's bound on the false-duplicate chance of a query,
	// however far the tree grows.
	FMax float64
}

// Limits of the Bloom family's parameters.
const (
	MaxK        = 32     // positions per URL
	MaxGroups   = 1 << 8 // MDBF groups: each is scanned on every query
	MaxChildren = 16     // DSBF children: the first level and every split
)

// LeafHeaderBytes is the header at the start of each DSBF leaf (shard):
// bytes 0–7 nonzero once the leaf has split, bytes 8–15 the URLs stored
// in it, both big-endian (as Redis's BITFIELD reads them); the leaf's
// filter bits follow.
const LeafHeaderBytes = 64

// GroupBits is the bits one MDBF group takes: V1 and V2.
func (f Filter) GroupBits() uint64 { return f.V1Bits + f.V1Bits/uint64(f.K) }

// CheckFilter returns an error wrapping ErrLayout unless f suits layout l
// over sizes s.
func (l Layout) CheckFilter(f Filter, s Sizes) error {
	bits := uint64(s.Bytes()) * 8
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%w: layout %s: %s", ErrLayout, l, fmt.Sprintf(why, args...))
	}
	switch {
	case !l.Filter():
		if f != (Filter{}) {
			return bad("has no filter parameters, but some are given")
		}
		return nil
	case f.K < 1 || f.K > MaxK:
		return bad("k %d (want 1 to %d)", f.K, MaxK)
	}
	if why := l.info().filter(f, bits); why != "" {
		return bad("%s", why)
	}
	return nil
}

// bloomFilter, mdbfFilter and dsbfFilter say what is wrong with f for
// their layout in a state of stateBits bits ("" when nothing), once K is
// known to be in 1..MaxK.
func bloomFilter(f Filter, _ uint64) string {
	if f.K > 10 || f.Groups != 0 || f.V1Bits != 0 || f.Children != 0 || f.FMax != 0 {
		return fmt.Sprintf("takes k from 1 to 10 only (have %+v)", f)
	}
	return ""
}

func mdbfFilter(f Filter, bits uint64) string {
	switch {
	case f.K < 2 || f.Groups < 1 || f.Groups > MaxGroups || f.Children != 0 || f.FMax != 0:
		return fmt.Sprintf("takes k ≥ 2 and 1 to %d groups only (have %+v)", MaxGroups, f)
	case f.V1Bits == 0 || f.V1Bits%(64*uint64(f.K)) != 0 || f.V1Bits > 1<<32:
		return fmt.Sprintf("v1-bits %d is not a multiple of 64·k = %d up to 2^32", f.V1Bits, 64*f.K)
	case uint64(f.Groups)*f.GroupBits() > bits:
		return fmt.Sprintf("%d groups of %d bits do not fit in %d bits", f.Groups, f.GroupBits(), bits)
	}
	return ""
}

func dsbfFilter(f Filter, _ uint64) string {
	if f.Children < 2 || f.Children > MaxChildren || !(f.FMax > 0 && f.FMax < 1) || f.Groups != 0 || f.V1Bits != 0 {
		return fmt.Sprintf("takes 2 to %d children and an fmax in (0, 1) only (have %+v)", MaxChildren, f)
	}
	return ""
}

func (f Filter) marshal(add func(k string, v any)) {
	if f.K != 0 {
		add("k", f.K)
	}
	if f.Groups != 0 {
		add("groups", f.Groups)
		add("v1-bits", f.V1Bits)
	}
	if f.Children != 0 {
		add("children", f.Children)
		add("fmax", strconv.FormatFloat(f.FMax, 'g', -1, 64))
	}
}

func (f *Filter) unmarshal(fields map[string]string) error {
	ints := []struct {
		name string
		p    *int
	}{{"k", &f.K}, {"groups", &f.Groups}, {"children", &f.Children}}
	for _, i := range ints {
		if v, ok := fields[i.name]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%w: %s %q", ErrCorrupt, i.name, v)
			}
			*i.p = n
		}
	}
	var err error
	if v, ok := fields["v1-bits"]; ok {
		if f.V1Bits, err = strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("%w: v1-bits %q", ErrCorrupt, v)
		}
	}
	if v, ok := fields["fmax"]; ok {
		if f.FMax, err = strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("%w: fmax %q", ErrCorrupt, v)
		}
	}
	return nil
}

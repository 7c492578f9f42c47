package quic

import "strconv"

// Version is a QUIC version number, as in the long header.
type Version uint32

// The versions a Tracker decrypts.
const (
	Version1 Version = 0x00000001 // RFC 9000
	Version2 Version = 0x6b3343cf // RFC 9369
	Draft29  Version = 0xff00001d // the last draft many stacks deployed
)

// versionParams is what a version changes in the Initial packets.
type versionParams struct {
	salt              []byte
	keyLabel, ivLabel string
	hpLabel           string
	initialType       uint8 // the long packet type bits (0x30 of the first byte, shifted) of an Initial
}

var (
	saltV1 = []byte{0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a}
	saltV2 = []byte{0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9}
	// Drafts 29 to 32, and 23 to 28.
	saltDraft29 = []byte{0xaf, 0xbf, 0xec, 0x28, 0x99, 0x93, 0xd2, 0x4c, 0x9e, 0x97, 0x86, 0xf1, 0x9c, 0x61, 0x11, 0xe0, 0x43, 0x90, 0xa8, 0x99}
	saltDraft23 = []byte{0xc3, 0xee, 0xf7, 0x12, 0xc7, 0x2e, 0xbb, 0x5a, 0x11, 0xa7, 0xd2, 0x43, 0x2b, 0xb4, 0x63, 0x65, 0xbe, 0xf9, 0xf5, 0x02}

	paramsV1      = versionParams{salt: saltV1, keyLabel: "quic key", ivLabel: "quic iv", hpLabel: "quic hp", initialType: 0}
	paramsV2      = versionParams{salt: saltV2, keyLabel: "quicv2 key", ivLabel: "quicv2 iv", hpLabel: "quicv2 hp", initialType: 1}
	paramsDraft29 = versionParams{salt: saltDraft29, keyLabel: "quic key", ivLabel: "quic iv", hpLabel: "quic hp", initialType: 0}
	paramsDraft23 = versionParams{salt: saltDraft23, keyLabel: "quic key", ivLabel: "quic iv", hpLabel: "quic hp", initialType: 0}
)

// params returns v's parameters, nil for a version not understood.
func (v Version) params() *versionParams {
	switch {
	case v == Version1:
		return &paramsV1
	case v == Version2:
		return &paramsV2
	case v >= 0xff00001d && v <= 0xff000020:
		return &paramsDraft29
	case v >= 0xff000017 && v <= 0xff00001c:
		return &paramsDraft23
	}
	return nil
}

// Known reports whether a Tracker decrypts v's Initial packets.
func (v Version) Known() bool { return v.params() != nil }

// String names v: "v1", "v2", "draft-29", else its number in hex.
func (v Version) String() string {
	switch {
	case v == Version1:
		return "v1"
	case v == Version2:
		return "v2"
	case v>>8 == 0xff0000:
		return "draft-" + strconv.Itoa(int(v&0xff))
	}
	return "0x" + strconv.FormatUint(uint64(v), 16)
}

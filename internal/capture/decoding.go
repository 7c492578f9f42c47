package capture

import "github.com/urldedupd/urldedupd/internal/capture/decode"

// The decoding lives in package decode; these are the names callers of
// capture use.
type (
	// Segment is the part of a TCP segment the assembler needs
	// (decode.Segment).
	Segment = decode.Segment
	// Encap is what a frame came through (decode.Encap).
	Encap = decode.Encap
	// EncapLayer is one encapsulation (decode.EncapLayer).
	EncapLayer = decode.EncapLayer
	// UDPTunnel is a UDP port decoded as a tunnel (decode.UDPTunnel).
	UDPTunnel = decode.UDPTunnel
	// DefragOptions bound IP fragment reassembly (decode.DefragOptions).
	DefragOptions = decode.DefragOptions
	// Reason is why a frame carried no TCP segment (decode.Reason).
	Reason = decode.Reason
	// ReasonKind says where decoding stopped (decode.ReasonKind).
	ReasonKind = decode.ReasonKind
	// Reasons count frames by Reason (decode.Reasons).
	Reasons = decode.Reasons
	// ReasonCount is how many frames had a reason (decode.ReasonCount).
	ReasonCount = decode.ReasonCount
)

// The encapsulations callers name (decode's EncapLayer values).
const (
	EncapVLAN     = decode.EncapVLAN
	EncapQinQ     = decode.EncapQinQ
	EncapPPPoE    = decode.EncapPPPoE
	EncapMPLS     = decode.EncapMPLS
	EncapEthernet = decode.EncapEthernet
)

// Bounds and defaults of the decoding (package decode).
const (
	MaxEncap               = decode.MaxEncap
	MaxReasons             = decode.MaxReasons
	MaxUDPTunnels          = decode.MaxUDPTunnels
	DatagramCost           = decode.DatagramCost
	DefaultDefragDatagrams = decode.DefaultDefragDatagrams
	DefaultDefragBytes     = decode.DefaultDefragBytes
	DefaultDefragTimeout4  = decode.DefaultDefragTimeout4
	DefaultDefragTimeout6  = decode.DefaultDefragTimeout6
)

// DefaultUDPTunnels are the UDP tunnels decoded when Options.UDPTunnels is
// nil (decode.DefaultUDPTunnels).
var DefaultUDPTunnels = decode.DefaultUDPTunnels

// ErrTunnelSpec is returned by ParseUDPTunnel (decode.ErrTunnelSpec).
var ErrTunnelSpec = decode.ErrTunnelSpec

// NewEncap returns an Encap of the given layers, outside in
// (decode.NewEncap).
func NewEncap(ls ...EncapLayer) Encap { return decode.NewEncap(ls...) }

// ParseUDPTunnel reads a --udp-tunnel value, KIND:PORT
// (decode.ParseUDPTunnel).
func ParseUDPTunnel(s string) (UDPTunnel, error) { return decode.ParseUDPTunnel(s) }

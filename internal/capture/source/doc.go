// Package source reads captured frames: pcap and pcapng files, plain or
// gzip-compressed, one after the other (FileSource), and a network
// interface through AF_PACKET with a memory-mapped TPACKET_V3 ring
// (LiveSource, Linux only).
//
// A Source yields Packets whose Data aliases the source's buffer, valid
// until the next call to Next: reading a frame allocates nothing. The
// frames are decoded by package capture's Engine; this package knows
// nothing of what they carry but their link type.
package source

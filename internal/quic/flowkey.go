package quic

import "net/netip"

// flowKey is a client's address and port and the server's, the addresses
// in their 16-byte form. It holds no pointer (a netip.Addr does), so that
// the tables keyed by it hash it as one block of memory and are not
// scanned by the garbage collector. An address's zone is not kept: a
// captured packet's addresses have none.
type flowKey struct {
	client, server [16]byte
	cport, sport   uint16
	c4, s4         bool // the address is IPv4 (else IPv6, perhaps IPv4-mapped)
}

func makeFlowKey(client, server netip.AddrPort) flowKey {
	c, s := client.Addr(), server.Addr()
	return flowKey{client: c.As16(), server: s.As16(), cport: client.Port(), sport: server.Port(), c4: c.Is4(), s4: s.Is4()}
}

// reverse returns the key of the other direction.
func (k flowKey) reverse() flowKey {
	return flowKey{client: k.server, server: k.client, cport: k.sport, sport: k.cport, c4: k.s4, s4: k.c4}
}

// addrs returns the client's and the server's address and port.
func (k flowKey) addrs() (client, server netip.AddrPort) {
	return netip.AddrPortFrom(addrFrom16(k.client, k.c4), k.cport), netip.AddrPortFrom(addrFrom16(k.server, k.s4), k.sport)
}

func addrFrom16(a [16]byte, is4 bool) netip.Addr {
	ip := netip.AddrFrom16(a)
	if is4 {
		return ip.Unmap()
	}
	return ip
}

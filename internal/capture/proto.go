package capture

import (
	"fmt"
	"strings"

	"github.com/urldedupd/urldedupd/internal/capture/record"
)

// Proto is what a record came from (record.Proto): its protocol's place
// in the list (protocols.go). A Protos set holds up to MaxProtos of them.
type Proto = record.Proto

// Protos is a set of Proto, bit 1<<p for each: up to MaxProtos
// protocols (it was a uint8, eight at most).
type Protos uint64

// MaxProtos is the most protocols a Protos set holds.
const MaxProtos = record.MaxProtos

// AllProtos is every protocol: what a zero Options.Protos means.
const AllProtos Protos = 1<<NumProtos - 1

// NumProtos must fit in a Protos: this fails to compile when it does not.
var _ [MaxProtos - NumProtos]struct{}

// Has reports whether p is in s.
func (s Protos) Has(p Proto) bool { return p < NumProtos && s&(1<<p) != 0 }

// String lists the set as ParseProtos reads it: "http,tls".
func (s Protos) String() string {
	var names []string
	for p := range NumProtos {
		if s.Has(p) {
			names = append(names, p.String())
		}
	}
	return strings.Join(names, ",")
}

// ParseProtos reads a comma-separated list of protocol names ("http,tls,
// quic,h2c"; spaces around names are allowed). An unknown or empty name,
// or an empty list, is ErrProtos.
func ParseProtos(list string) (Protos, error) {
	var s Protos
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		p := Proto(0)
		for p < NumProtos && protoNames[p] != name {
			p++
		}
		if p == NumProtos {
			return 0, fmt.Errorf("%w %q (known: %s)", ErrProtos, name, AllProtos)
		}
		s |= 1 << p
	}
	return s, nil
}

package dedupproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"
)

// Topology is the system the protocol runs in: networks, each with one
// centre and its hosts, every node named by its IP address (its identity
// in frames) and reached through its Redis server.
type Topology struct {
	// Prefix starts every key the protocol writes; default "dedup".
	Prefix string
	// Deadline is how long a centre waits for the answers to a request
	// before it completes the frame without them; default 2 s.
	Deadline time.Duration
	Networks []Network
}

// Network is one of the paper's networks: a centre and its hosts.
type Network struct {
	Name   string
	Centre Node
	Hosts  []Node
}

// Node is a host or a centre: its address in frames, and its Redis.
type Node struct {
	IP    netip.Addr
	Redis string // redis://host:port/db, rediss://…, unix:///path
}

// ErrTopology is what every refused topology's error wraps.
var ErrTopology = errors.New("dedupproto: bad topology")

// Defaults of Topology.
const (
	DefaultPrefix   = "dedup"
	DefaultDeadline = 2 * time.Second
	maxNetworkName  = 16
)

// topologyFile is the JSON form of a Topology:
//
//	{"prefix":"dedup","deadline":"2s","networks":[
//	  {"name":"n1","centre":{"ip":"10.1.0.1","redis":"redis://10.1.0.1:6379/0"},
//	   "hosts":[{"ip":"10.1.0.2","redis":"redis://10.1.0.2:6379/0"}]}]}
type topologyFile struct {
	Prefix   string `json:"prefix"`
	Deadline string `json:"deadline"`
	Networks []struct {
		Name   string     `json:"name"`
		Centre nodeFile   `json:"centre"`
		Hosts  []nodeFile `json:"hosts"`
	} `json:"networks"`
}

type nodeFile struct {
	IP    string `json:"ip"`
	Redis string `json:"redis"`
}

// LoadTopology reads a topology from the JSON file at path.
func LoadTopology(path string) (*Topology, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseTopology(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTopology reads a topology from its JSON form and checks it.
func ParseTopology(b []byte) (*Topology, error) {
	var f topologyFile
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTopology, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrTopology)
	}
	t := &Topology{Prefix: f.Prefix}
	if f.Deadline != "" {
		dl, err := time.ParseDuration(f.Deadline)
		if err != nil {
			return nil, fmt.Errorf("%w: deadline: %v", ErrTopology, err)
		}
		t.Deadline = dl
	}
	node := func(where string, n nodeFile) (Node, error) {
		ip, err := netip.ParseAddr(n.IP)
		if err != nil {
			return Node{}, fmt.Errorf("%w: %s: ip: %v", ErrTopology, where, err)
		}
		return Node{IP: ip, Redis: n.Redis}, nil
	}
	for i, n := range f.Networks {
		nw := Network{Name: n.Name}
		var err error
		if nw.Centre, err = node(fmt.Sprintf("network %d (%q) centre", i, n.Name), n.Centre); err != nil {
			return nil, err
		}
		for j, h := range n.Hosts {
			hn, err := node(fmt.Sprintf("network %d (%q) host %d", i, n.Name, j), h)
			if err != nil {
				return nil, err
			}
			nw.Hosts = append(nw.Hosts, hn)
		}
		t.Networks = append(t.Networks, nw)
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	return t, nil
}

// Check reports whether t can run, and if not, why: at least one network,
// each named (1 to 16 bytes of a-z, 0-9 and '-') with a centre and at
// least one host, every address given once, every node a Redis.
func (t *Topology) Check() error {
	if len(t.Networks) == 0 {
		return fmt.Errorf("%w: no networks", ErrTopology)
	}
	if t.Deadline < 0 {
		return fmt.Errorf("%w: deadline %v is negative", ErrTopology, t.Deadline)
	}
	names := map[string]bool{}
	ips := map[netip.Addr]string{}
	node := func(where string, n Node) error {
		if !n.IP.IsValid() || n.IP.Zone() != "" {
			return fmt.Errorf("%w: %s: no IP address", ErrTopology, where)
		}
		if other, ok := ips[n.IP]; ok {
			return fmt.Errorf("%w: %s: IP %s is also %s's", ErrTopology, where, n.IP, other)
		}
		ips[n.IP] = where
		if n.Redis == "" {
			return fmt.Errorf("%w: %s: no redis address", ErrTopology, where)
		}
		return nil
	}
	for i, n := range t.Networks {
		if !validName(n.Name) {
			return fmt.Errorf("%w: network %d: name %q, want 1 to %d bytes of a-z, 0-9 and '-'", ErrTopology, i, n.Name, maxNetworkName)
		}
		if names[n.Name] {
			return fmt.Errorf("%w: network %d: name %q given twice", ErrTopology, i, n.Name)
		}
		names[n.Name] = true
		if err := node("network "+n.Name+" centre", n.Centre); err != nil {
			return err
		}
		if len(n.Hosts) == 0 {
			return fmt.Errorf("%w: network %s has no hosts", ErrTopology, n.Name)
		}
		for j, h := range n.Hosts {
			if err := node(fmt.Sprintf("network %s host %d", n.Name, j), h); err != nil {
				return err
			}
		}
	}
	return nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > maxNetworkName {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func (t *Topology) prefix() string {
	if t.Prefix == "" {
		return DefaultPrefix
	}
	return t.Prefix
}

func (t *Topology) deadline() time.Duration {
	if t.Deadline == 0 {
		return DefaultDeadline
	}
	return t.Deadline
}

// Role says what a node is.
type Role uint8

// Roles.
const (
	Unknown Role = iota
	HostRole
	CentreRole
)

// Find returns the network of the node at ip, and its role there
// (Unknown and nil when no node has ip).
func (t *Topology) Find(ip netip.Addr) (*Network, Role) {
	for i := range t.Networks {
		n := &t.Networks[i]
		if n.Centre.IP == ip {
			return n, CentreRole
		}
		for _, h := range n.Hosts {
			if h.IP == ip {
				return n, HostRole
			}
		}
	}
	return nil, Unknown
}

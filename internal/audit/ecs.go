package audit

import (
	"bytes"
	"net/netip"
	"strconv"
	"time"

	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/communityid"
)

// ECSVersion is the version of the Elastic Common Schema the ECS records
// follow (ecs.version in each).
const ECSVersion = "9.4.0"

// appendECS appends r as one Elastic Common Schema document, a line: the
// same record as JSON writes, in ECS's field names (@timestamp, event.*,
// source.*, destination.*, network.*, url.*, http.request.method,
// user_agent.original, tls.client.server_name), with what ECS has no
// field for under urldedupd.* (new, proto, tunnel, encap, ja4, alpn,
// versions, ech).
func appendECS(b []byte, r *capture.Request, isNew bool) []byte {
	b = append(b, `{"@timestamp":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","ecs":{"version":"`+ECSVersion+`"},"event":{"kind":"event","category":`...)
	web := r.Proto == capture.ProtoHTTP || r.Proto == capture.ProtoH2C
	switch {
	case web:
		b = append(b, `["network","web"],"type":["access"]`...)
	default:
		b = append(b, `["network"],"type":["connection"]`...)
	}
	if isNew {
		b = append(b, `,"action":"url-new"`...)
	} else {
		b = append(b, `,"action":"url-duplicate"`...)
	}
	b = append(b, `,"module":"urldedupd","dataset":"urldedupd.url"},"source":`...)
	b = appendEndpoint(b, r.Src)
	b = append(b, `,"destination":`...)
	b = appendEndpoint(b, r.Dst)
	b = append(b, `,"network":{"transport":"`...)
	tr := transport(r.Proto)
	if tr == communityid.UDP {
		b = append(b, "udp"...)
	} else {
		b = append(b, "tcp"...)
	}
	b = append(b, `","type":"`...)
	if r.Src.Addr().Unmap().Is4() {
		b = append(b, "ipv4"...)
	} else {
		b = append(b, "ipv6"...)
	}
	b = append(b, `","protocol":"`...)
	switch r.Proto {
	case capture.ProtoHTTP, capture.ProtoH2C:
		b = append(b, "http"...)
	default: // tls, quic: names from a fixed table
		b = append(b, r.Proto.String()...)
	}
	b = append(b, `","community_id":"`...)
	b = communityid.Append(b, 0, tr, r.Src, r.Dst)
	b = append(b, `"},"url":`...)
	b = appendECSURL(b, r.URL, r.Tunnel)
	if len(r.Method) > 0 {
		b = append(b, `,"http":{"request":{"method":`...)
		b = appendJSONString(b, r.Method)
		b = append(b, `}}`...)
	}
	if len(r.UserAgent) > 0 {
		b = append(b, `,"user_agent":{"original":`...)
		b = appendJSONString(b, r.UserAgent)
		b = append(b, '}')
	}
	if len(r.Hello.ServerName) > 0 {
		b = append(b, `,"tls":{"client":{"server_name":`...)
		b = appendJSONString(b, r.Hello.ServerName)
		b = append(b, `}}`...)
	}
	b = append(b, `,"observer":{"type":"sensor","product":"urldedupd","vendor":"urldedupd"},"urldedupd":{"new":`...)
	b = strconv.AppendBool(b, isNew)
	b = append(b, `,"proto":"`...)
	b = append(b, r.Proto.String()...)
	b = append(b, '"')
	if r.Tunnel {
		b = append(b, `,"tunnel":true`...)
	}
	if !r.Encap.Plain() {
		b = append(b, `,"encap":"`...)
		b = r.Encap.AppendTo(b)
		b = append(b, '"')
	}
	if len(r.JA4) > 0 {
		b = append(b, `,"ja4":"`...)
		b = append(b, r.JA4...)
		b = append(b, '"')
	}
	b = appendHello(b, &r.Hello) // "sni" again, "alpn", "versions", "ech": as in the JSON records
	return append(b, "}}\n"...)
}

// appendEndpoint appends an ECS source or destination: ip, port and
// address (the IP again: no name is known).
func appendEndpoint(b []byte, ap netip.AddrPort) []byte {
	b = append(b, `{"ip":"`...)
	b = ap.Addr().Unmap().AppendTo(b)
	b = append(b, `","port":`...)
	b = strconv.AppendUint(b, uint64(ap.Port()), 10)
	b = append(b, `,"address":"`...)
	b = ap.Addr().Unmap().AppendTo(b)
	return append(b, `"}`...)
}

// appendECSURL appends ECS's url object for a record's URL: original and
// full as recorded, and its parts (scheme, domain, port when written,
// path, query). A CONNECT's authority (a tunnel) is no full URL: it has
// original, domain and port only. A URL that does not parse has original
// alone.
func appendECSURL(b, u []byte, tunnel bool) []byte {
	b = append(b, `{"original":`...)
	b = appendJSONString(b, u)
	scheme, rest := []byte(nil), u
	if !tunnel {
		i := bytes.Index(u, []byte("://"))
		if i <= 0 {
			return append(b, '}')
		}
		scheme, rest = u[:i], u[i+3:]
		b = append(b, `,"full":`...)
		b = appendJSONString(b, u)
		b = append(b, `,"scheme":`...)
		b = appendJSONString(b, scheme)
	}
	end := bytes.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host, port := splitHostPort(rest[:end])
	if len(host) > 0 {
		b = append(b, `,"domain":`...)
		b = appendJSONString(b, host)
	}
	if n, ok := parsePort(port); ok {
		b = append(b, `,"port":`...)
		b = strconv.AppendUint(b, uint64(n), 10)
	}
	if !tunnel {
		path := rest[end:]
		if i := bytes.IndexByte(path, '#'); i >= 0 {
			path = path[:i]
		}
		path, query, hasQuery := bytes.Cut(path, []byte("?"))
		if len(path) > 0 {
			b = append(b, `,"path":`...)
			b = appendJSONString(b, path)
		}
		if hasQuery {
			b = append(b, `,"query":`...)
			b = appendJSONString(b, query)
		}
	}
	return append(b, '}')
}

// splitHostPort splits an authority into its host (an IPv6 literal with
// its brackets, as ECS's url.domain keeps them) and its port, if written.
func splitHostPort(a []byte) (host, port []byte) {
	if len(a) > 0 && a[0] == '[' {
		if i := bytes.IndexByte(a, ']'); i >= 0 {
			host, a = a[:i+1], a[i+1:]
			if len(a) > 0 && a[0] == ':' {
				port = a[1:]
			}
			return host, port
		}
	}
	if i := bytes.LastIndexByte(a, ':'); i >= 0 {
		return a[:i], a[i+1:]
	}
	return a, nil
}

// parsePort reads a port written in decimal, 0 to 65535 (strconv's error
// would allocate for every URL without a port).
func parsePort(p []byte) (uint16, bool) {
	if len(p) == 0 || len(p) > 5 {
		return 0, false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return uint16(n), n <= 65535
}

package audit_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urldedupd/urldedupd/internal/audit"
	"github.com/urldedupd/urldedupd/internal/capture"
	"github.com/urldedupd/urldedupd/internal/signature"
	"github.com/urldedupd/urldedupd/internal/tlshello"
)

// ecsField is a field of the ECS reference (testdata/ecs-9.4.0-fields.tsv).
type ecsField struct {
	typ     string
	array   bool
	allowed []string
}

func ecsFields(t *testing.T) map[string]ecsField {
	t.Helper()
	f, err := os.Open("testdata/ecs-9.4.0-fields.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fields := map[string]ecsField{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		e := ecsField{typ: c[1], array: c[2] == "array"}
		if c[3] != "-" {
			e.allowed = strings.Split(c[3], ",")
		}
		fields[c[0]] = e
	}
	if len(fields) < 200 {
		t.Fatalf("%d ECS fields", len(fields))
	}
	return fields
}

// flatten walks a decoded document into dotted names and their values;
// objects ECS types as object (labels) are kept whole.
func flatten(prefix string, v any, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok || prefix == "labels" {
		out[prefix] = v
		return
	}
	for k, x := range m {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		flatten(name, x, out)
	}
}

// checkECS checks one value against its field's type in the reference.
func checkECS(t *testing.T, name string, v any, f ecsField) {
	t.Helper()
	vals := []any{v}
	if list, ok := v.([]any); ok {
		if !f.array {
			t.Errorf("%s: a list, but ECS has one value", name)
		}
		vals = list
	}
	for _, x := range vals {
		switch f.typ {
		case "keyword", "wildcard", "match_only_text", "constant_keyword":
			s, ok := x.(string)
			if !ok {
				t.Errorf("%s: %v is not a string", name, x)
			}
			if f.allowed != nil && !slices.Contains(f.allowed, s) {
				t.Errorf("%s: %q is not one of %v", name, s, f.allowed)
			}
		case "ip":
			s, _ := x.(string)
			if _, err := netip.ParseAddr(s); err != nil {
				t.Errorf("%s: %v is not an IP address", name, x)
			}
		case "long":
			n, ok := x.(float64)
			if !ok || n != float64(int64(n)) {
				t.Errorf("%s: %v is not an integer", name, x)
			}
		case "date":
			s, _ := x.(string)
			if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				t.Errorf("%s: %v is not a date", name, x)
			}
		case "boolean":
			if _, ok := x.(bool); !ok {
				t.Errorf("%s: %v is not a boolean", name, x)
			}
		default:
			t.Errorf("%s: type %s not checked", name, f.typ)
		}
	}
}

// Every field of every ECS document is in the ECS reference with the
// reference's type (and allowed values), but for urldedupd.*, the custom
// namespace; each document says what the JSON record says, for HTTP/1,
// h2c, a CONNECT, TLS and QUIC, IPv4 and IPv6, new and duplicate.
func TestECS(t *testing.T) {
	fields := ecsFields(t)
	base := *requests()[0]
	base.UserAgent = []byte("curl/8.0 \"quoted\"")
	v6 := base
	v6.Src, v6.Dst = netip.MustParseAddrPort("[2001:db8::10]:40001"), netip.MustParseAddrPort("[2001:db8::1]:8080")
	v6.URL, v6.Proto = []byte("http://[2001:db8::1]:8080/p/q?x=1&y=%20#frag"), capture.ProtoH2C
	tunnel := base
	tunnel.Method, tunnel.URL, tunnel.Tunnel, tunnel.UserAgent = []byte("CONNECT"), []byte("a.example:443"), true, nil
	tls := base
	tls.Method, tls.UserAgent, tls.Proto, tls.URL = nil, nil, capture.ProtoTLS, []byte("https://public.example:8443/")
	tls.Hello = hellos[1]
	tls.JA4 = []byte("t13d1516h2_8daaf6152771_e5627efa2ab1")
	quic := tls
	quic.Proto, quic.URL, quic.Hello = capture.ProtoQUIC, []byte("https://[2001:db8::1]/"), tlshello.Hello{ALPN: []byte("\x02h3")}
	rs := []*capture.Request{&base, &v6, &tunnel, &tls, &quic, &base}
	var ecs, js bytes.Buffer
	for _, f := range []struct {
		format audit.Format
		out    *bytes.Buffer
	}{{audit.ECS, &ecs}, {audit.JSON, &js}} {
		l := audit.New(newSet(t), signature.NewSigner(signature.IEEE, signature.Safe), f.out, f.format, false, nil)
		for _, r := range rs {
			l.Request(r)
		}
		l.Close()
	}
	docs, recs := strings.Split(strings.TrimSpace(ecs.String()), "\n"), strings.Split(strings.TrimSpace(js.String()), "\n")
	if len(docs) != len(rs) || len(recs) != len(rs) {
		t.Fatalf("%d documents, %d records", len(docs), len(recs))
	}
	for i := range docs {
		var doc, rec map[string]any
		if err := json.Unmarshal([]byte(docs[i]), &doc); err != nil {
			t.Fatalf("%s: %v", docs[i], err)
		}
		if err := json.Unmarshal([]byte(recs[i]), &rec); err != nil {
			t.Fatal(err)
		}
		flat := map[string]any{}
		flatten("", doc, flat)
		for name, v := range flat {
			if strings.HasPrefix(name, "urldedupd.") {
				continue
			}
			f, ok := fields[name]
			if !ok {
				t.Errorf("document %d: %s is no ECS field", i, name)
				continue
			}
			checkECS(t, name, v, f)
		}
		src, dst := netip.MustParseAddrPort(rec["src"].(string)), netip.MustParseAddrPort(rec["dst"].(string))
		same := []struct {
			name string
			ecs  any
			rec  any
		}{
			{"@timestamp", flat["@timestamp"], rec["ts"]},
			{"source.ip", flat["source.ip"], src.Addr().String()},
			{"source.port", flat["source.port"], float64(src.Port())},
			{"destination.ip", flat["destination.ip"], dst.Addr().String()},
			{"destination.port", flat["destination.port"], float64(dst.Port())},
			{"url.original", flat["url.original"], rec["url"]},
			{"network.community_id", flat["network.community_id"], rec["community_id"]},
			{"http.request.method", flat["http.request.method"], rec["method"]},
			{"user_agent.original", flat["user_agent.original"], rec["user_agent"]},
			{"tls.client.server_name", flat["tls.client.server_name"], rec["sni"]},
			{"urldedupd.ja4", flat["urldedupd.ja4"], rec["ja4"]},
			{"urldedupd.new", flat["urldedupd.new"], rec["new"]},
			{"urldedupd.tunnel", flat["urldedupd.tunnel"], rec["tunnel"]},
		}
		for _, s := range same {
			if s.ecs != s.rec {
				t.Errorf("document %d: %s is %v, the record says %v", i, s.name, s.ecs, s.rec)
			}
		}
	}
	// The parts of the URLs.
	var d1 map[string]any
	json.Unmarshal([]byte(docs[1]), &d1)
	u := d1["url"].(map[string]any)
	if u["domain"] != "[2001:db8::1]" || u["port"] != float64(8080) || u["path"] != "/p/q" || u["query"] != "x=1&y=%20" || u["scheme"] != "http" {
		t.Errorf("url parts: %v", u)
	}
	var d2 map[string]any
	json.Unmarshal([]byte(docs[2]), &d2)
	if u := d2["url"].(map[string]any); u["domain"] != "a.example" || u["port"] != float64(443) || u["full"] != nil {
		t.Errorf("tunnel url: %v", u)
	}
	if !strings.Contains(docs[5], `"action":"url-duplicate"`) || !strings.Contains(docs[4], `"transport":"udp"`) {
		t.Errorf("documents 4, 5: %s\n%s", docs[4], docs[5])
	}
}

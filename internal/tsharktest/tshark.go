// Package tsharktest runs tshark on a capture file for tests that check
// urldedupd's results against it: the one place that reads HTTP requests
// out of tshark's field output.
package tsharktest

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// Requests returns the HTTP requests tshark finds in the capture at path,
// as "METHOD URL", sorted; decodeAs are tshark -d arguments ("udp.port==9999,vxlan").
//
// For a request without a Host header (HTTP/1.0) tshark leaves full_uri
// empty, while urldedupd falls back to the server's address: for those
// the URL is rebuilt from tshark's own ip.dst (or ipv6.dst), tcp.dstport
// and request URI, as http://ADDR:PORT/URI.
func Requests(t testing.TB, path string, decodeAs ...string) []string {
	t.Helper()
	return RequestsWith(t, path, nil, decodeAs...)
}

// RequestsWith is Requests with tshark preferences too ("-o", each
// "NAME:VALUE": "teredo.heuristic_teredo:TRUE").
func RequestsWith(t testing.TB, path string, prefs []string, decodeAs ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is needed (make test installs it): ", err)
	}
	args := []string{"-n", "-r", path}
	for _, p := range prefs {
		args = append(args, "-o", p)
	}
	for _, d := range decodeAs {
		args = append(args, "-d", d)
	}
	args = append(args, "-Y", "http.request", "-T", "fields", "-E", "aggregator=/s",
		"-e", "http.request.method", "-e", "http.request.full_uri",
		"-e", "http.request.uri", "-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport")
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	var reqs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 6 {
			t.Fatalf("tshark line %q: %d fields, want 6", line, len(f))
		}
		methods, uris, paths := strings.Fields(f[0]), strings.Fields(f[1]), strings.Fields(f[2])
		for i, m := range methods {
			if len(uris) == len(methods) {
				reqs = append(reqs, m+" "+uris[i])
				continue
			}
			host := f[3] + f[4]
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
			reqs = append(reqs, m+" http://"+host+":"+f[5]+paths[i])
		}
	}
	sort.Strings(reqs)
	return reqs
}

package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urldedupd/urldedupd/internal/signature"
)

// The documented weakness of the bitmap layout: CRC32 is linear, so anyone
// can make a URL whose signature is that of a URL already seen
// (scripts/crcforge appends four solved bytes to a prefix of their choice),
// and the bitmap layout then reports the forged URL a duplicate: it never
// reaches filter's output or the audit log. The keyed layout reports it
// new.
func TestForgedCRC(t *testing.T) {
	t.Parallel()
	forger := filepath.Join(t.TempDir(), "crcforge")
	if out, err := exec.Command("go", "build", "-o", forger, "../../scripts/crcforge").CombinedOutput(); err != nil {
		t.Fatalf("build crcforge: %v\n%s", err, out)
	}
	const seen = "https://www.example.com/account/login"
	for _, tc := range []struct {
		name   string
		init   []string // arguments of init after "init"
		forge  []string // crcforge flags matching the state's format
		prefix string
		want   string // verdict on the forged URL
	}{
		{"bitmap", nil, nil, "http://evil.example/exfil?d=", "dup"},
		{"bitmap crc32c", []string{"--signature", "crc32c"}, []string{"-signature", "crc32c"}, "HTTP://Evil.Example:80/a/../x", "dup"},
		{"bitmap normalize none", []string{"--normalize", "none"}, []string{"-normalize", "none", "-charset", "unreserved"}, "http://evil.example/", "dup"},
		// The keyed layout hashes the normalized URL with SipHash under a
		// secret key: the CRC32 forgery means nothing to it.
		{"keyed", []string{"--layout", "keyed"}, nil, "http://evil.example/exfil?d=", "new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if out, stderr, code := run(t, nil, append([]string{"--dir", dir, "init"}, tc.init...)...); code != 0 {
				t.Fatalf("init: %d %q %q", code, out, stderr)
			}
			if out, stderr, code := run(t, strings.NewReader(seen+"\n"), "--dir", dir, "filter"); code != 0 || out != seen+"\n" {
				t.Fatalf("filter %s: %d %q %q", seen, code, out, stderr)
			}
			out, err := exec.Command(forger, append(tc.forge, seen, tc.prefix)...).Output()
			if ee, ok := err.(*exec.ExitError); ok {
				t.Fatalf("crcforge: %v: %s", err, ee.Stderr)
			} else if err != nil {
				t.Fatalf("crcforge: %v", err)
			}
			forged := strings.TrimSuffix(string(out), "\n")
			// The forgery, checked independently of crcforge: another URL
			// after normalization, the same signature.
			signer := signer(t, tc.init)
			sigSeen, _ := signer.Sign([]byte(seen))
			sigForged, ok := signer.Sign([]byte(forged))
			normSeen := normalForm(signer, seen)
			if normForged := normalForm(signer, forged); !ok || sigForged != sigSeen || normForged == normSeen || !strings.HasPrefix(forged, tc.prefix) {
				t.Fatalf("crcforge printed %q: normal form %q (valid %v), signature %v; seen %q, %v", forged, normForged, ok, sigForged, normSeen, sigSeen)
			}
			t.Logf("seen %s, forged %q: both %v", seen, forged, sigSeen)

			// check first: it only asks, where filter stores a new URL.
			if out, _, code := run(t, nil, "--dir", dir, "check", forged); code != 0 || out != tc.want+"\t"+forged+"\n" {
				t.Fatalf("check %q: %d %q, want %s", forged, code, out, tc.want)
			}
			// A URL of the same prefix that is not forged is new: the state
			// does not call everything a duplicate.
			control := tc.prefix + "plain"
			out2, stderr, code := run(t, strings.NewReader(forged+"\n"+control+"\n"), "--dir", dir, "filter", "--mark")
			if want := tc.want + "\t" + forged + "\nnew\t" + control + "\n"; code != 0 || out2 != want {
				t.Fatalf("filter --mark: %d %q %q, want %q", code, out2, stderr, want)
			}
		})
	}
}

// signer returns the CRC32 signer of a state made by init with args (for a
// keyed state, the CRC32 the forgery targets).
func signer(t *testing.T, args []string) *signature.Signer {
	t.Helper()
	alg, mode := signature.IEEE, signature.Safe
	for i := 0; i+1 < len(args); i += 2 {
		var err error
		switch args[i] {
		case "--signature":
			alg, err = signature.ParseAlgorithm(args[i+1])
		case "--normalize":
			mode, err = signature.ParseMode(args[i+1])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return signature.NewSigner(alg, mode)
}

func normalForm(s *signature.Signer, url string) string {
	norm, err := s.Normalized([]byte(url))
	if err != nil {
		return url
	}
	return string(norm)
}

// Command crcforge shows why a CRC32 signature must not be trusted against
// an adversary: given a URL already seen and a URL prefix the attacker
// controls, it prints a different URL, made of the prefix, at most three
// filler characters and four solved bytes, whose urldedupd signature
// (normalization, then CRC32) is the seen URL's. A state of the bitmap
// layout reports the forged URL a duplicate, so it never reaches the output
// or the audit log. CRC32 is linear, so the four bytes are solved for, not
// searched: the filler only moves the solution until its bytes are ones
// that normalization leaves unchanged.
//
// Usage:
//
//	go run ./scripts/crcforge [-signature crc32|crc32c] [-normalize safe|none] [-charset query|unreserved] [-v] SEEN-URL PREFIX
//
// It prints the forged URL; with -v, also the signatures and normal forms on
// stderr. Exit status 1 when no forgery was found, 2 on bad usage.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/urldedupd/urldedupd/internal/signature"
)

func main() {
	alg := flag.String("signature", "crc32", "the state's signature: crc32 or crc32c")
	mode := flag.String("normalize", "safe", "the state's normalization: safe or none")
	set := flag.String("charset", "query", "bytes the four solved bytes may take: query (printable ASCII that normalization keeps) or unreserved (A-Z a-z 0-9 - _ ~)")
	verbose := flag.Bool("v", false, "print the signatures and normal forms on stderr")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: crcforge [flags] SEEN-URL PREFIX\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	a, err := signature.ParseAlgorithm(*alg)
	if err != nil {
		usage(err)
	}
	m, err := signature.ParseMode(*mode)
	if err != nil {
		usage(err)
	}
	charset := map[string]string{"query": charsetQuery, "unreserved": charsetUnreserved}[*set]
	if charset == "" {
		usage(fmt.Errorf("-charset %q: want query or unreserved", *set))
	}
	seen, prefix := flag.Arg(0), flag.Arg(1)
	f, err := forge(a, m, seen, prefix, charset)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crcforge:", err)
		os.Exit(1)
	}
	if *verbose {
		s := signature.NewSigner(a, m)
		sig, _ := s.Sign([]byte(seen))
		fmt.Fprintf(os.Stderr, "seen    %s  %s\nforged  %s  %s\n(%d tries)\n", sig, normalized(s, seen), f.Signature, f.Normalized, f.Tries)
	}
	fmt.Println(f.URL)
}

func usage(err error) {
	fmt.Fprintln(os.Stderr, "crcforge:", err)
	os.Exit(2)
}

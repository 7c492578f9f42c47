// Command quicprobe makes real QUIC connections with quic-go, for the live
// tests of urldedupd's QUIC capture:
//
//	quicprobe serve -listen ADDR [-versions 1,2]
//	    a QUIC server (self-signed certificate, ALPN h3) that accepts
//	    connections and completes their handshakes until killed;
//	quicprobe dial -addr ADDR [-version 1|2] NAME...
//	    one connection per NAME, in order, each from a new socket, with
//	    NAME as its server name: the handshake completed, then closed.
//	    It exits 1 when one fails.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"strings"
	"time"

	quicgo "github.com/quic-go/quic-go"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: quicprobe serve|dial [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "dial":
		err = dial(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "quicprobe:", err)
		os.Exit(1)
	}
}

func versions(list string) ([]quicgo.Version, error) {
	var vs []quicgo.Version
	for v := range strings.SplitSeq(list, ",") {
		switch v {
		case "1":
			vs = append(vs, quicgo.Version1)
		case "2":
			vs = append(vs, quicgo.Version2)
		default:
			return nil, fmt.Errorf("QUIC version %q: 1 or 2", v)
		}
	}
	return vs, nil
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:4433", "UDP address")
	vlist := fs.String("versions", "1,2", "QUIC versions accepted")
	fs.Parse(args)
	vs, err := versions(*vlist)
	if err != nil {
		return err
	}
	cert, err := selfSigned()
	if err != nil {
		return err
	}
	ln, err := quicgo.ListenAddr(*listen, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h3"}}, &quicgo.Config{Versions: vs})
	if err != nil {
		return err
	}
	fmt.Println("listening on", ln.Addr())
	for {
		c, err := ln.Accept(context.Background())
		if err != nil {
			return err
		}
		go func() {
			<-c.HandshakeComplete()
			// The client closes: wait for it, bounded.
			select {
			case <-c.Context().Done():
			case <-time.After(10 * time.Second):
				c.CloseWithError(0, "")
			}
		}()
	}
}

func dial(args []string) error {
	fs := flag.NewFlagSet("dial", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:4433", "server UDP address")
	version := fs.String("version", "1", "QUIC version offered")
	fs.Parse(args)
	vs, err := versions(*version)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("dial: no server name")
	}
	for _, name := range fs.Args() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c, err := quicgo.DialAddr(ctx, *addr, &tls.Config{ServerName: name, NextProtos: []string{"h3"}, InsecureSkipVerify: true}, &quicgo.Config{Versions: vs})
		cancel()
		if err != nil {
			return fmt.Errorf("dial %s (%s): %w", *addr, name, err)
		}
		c.CloseWithError(0, "")
	}
	return nil
}

// selfSigned makes a throwaway ECDSA certificate.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "quicprobe"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

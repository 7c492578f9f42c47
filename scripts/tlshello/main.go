// Command tlshello records and makes real TLS ClientHellos, for the test
// data of internal/tlshello and the captures of internal/capture:
//
//	tlshello record -listen 127.0.0.1:4433 -out hello.bin
//	    accepts one connection, reads TLS records until the first
//	    handshake message is whole, writes it (without record headers)
//	    and closes the connection;
//	tlshello client -addr 127.0.0.1:4433 -name example.com [-ech PUBLIC] [-tls12]
//	    sends Go's crypto/tls ClientHello (its default key shares include
//	    X25519MLKEM768); with -ech, one with an ECH configuration whose
//	    public name is PUBLIC;
//	tlshello serve -listen ADDR -cert C -key K [-ech PUBLIC -echkey FILE]
//	    a TLS server (ECH too when its configuration list and key are given:
//	    `tlshello echconfig` writes both) answering "ok" to HTTP/1.1.
package main

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/urldedupd/urldedupd/internal/tlshello"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tlshello record|client|serve|echconfig [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "record":
		err = record(os.Args[2:])
	case "client":
		err = client(os.Args[2:])
	case "serve":
		err = serve(os.Args[2:])
	case "echconfig":
		err = echConfig(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlshello:", err)
		os.Exit(1)
	}
}

func record(args []string) error {
	fs := flag.NewFlagSet("record", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:4433", "address to listen on")
	out := fs.String("out", "", "file to write the ClientHello to")
	fs.Parse(args)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(30 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var msg []byte
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return fmt.Errorf("record header: %w", err)
		}
		if hdr[0] != 22 {
			return fmt.Errorf("record type %d, not a handshake", hdr[0])
		}
		frag := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
		if _, err := io.ReadFull(c, frag); err != nil {
			return fmt.Errorf("record: %w", err)
		}
		msg = append(msg, frag...)
		if n, ok := tlshello.HandshakeLen(msg); ok && len(msg) >= n {
			return os.WriteFile(*out, msg[:n], 0o644)
		}
	}
}

func client(args []string) error {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:4433", "server address")
	name := fs.String("name", "", "server name (SNI)")
	ech := fs.String("echconfig", "", "file with an ECHConfigList: send ECH")
	tls12 := fs.Bool("tls12", false, "offer TLS 1.2 at most")
	get := fs.Bool("get", false, "send GET / over the connection and print the answer")
	fs.Parse(args)
	cfg := &tls.Config{ServerName: *name, InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}
	if *tls12 {
		cfg.MaxVersion = tls.VersionTLS12
	}
	if *ech != "" {
		list, err := os.ReadFile(*ech)
		if err != nil {
			return err
		}
		cfg.EncryptedClientHelloConfigList = list
		cfg.MinVersion = tls.VersionTLS13
		cfg.NextProtos = []string{"http/1.1"}
	}
	if *get {
		cfg.NextProtos = []string{"http/1.1"}
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", *addr, cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", *name)
		b, _ := io.ReadAll(c)
		fmt.Printf("ech accepted %v\n%s", c.ConnectionState().ECHAccepted, b)
		return nil
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", *addr, cfg)
	if err == nil {
		c.Close()
	}
	return nil // the recorder closes the connection: the handshake fails, as meant
}

// echConfig writes an ECHConfigList (draft-ietf-tls-esni, version 0xfe0d,
// DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM) with the public
// name given, and the X25519 private key for it.
func echConfig(args []string) error {
	fs := flag.NewFlagSet("echconfig", flag.ExitOnError)
	public := fs.String("public", "public.example", "public name of the configuration")
	out := fs.String("out", "ech.list", "file for the ECHConfigList")
	keyOut := fs.String("key", "ech.key", "file for the private key")
	fs.Parse(args)
	key, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	cfg := marshalECHConfig(7, key.PublicKey().Bytes(), *public)
	list := binary.BigEndian.AppendUint16(nil, uint16(len(cfg)))
	list = append(list, cfg...)
	return errors.Join(os.WriteFile(*out, list, 0o644), os.WriteFile(*keyOut, key.Bytes(), 0o600))
}

func marshalECHConfig(id byte, pub []byte, public string) []byte {
	var c []byte
	c = append(c, id)
	c = binary.BigEndian.AppendUint16(c, 0x0020) // DHKEM(X25519, HKDF-SHA256)
	c = binary.BigEndian.AppendUint16(c, uint16(len(pub)))
	c = append(c, pub...)
	c = binary.BigEndian.AppendUint16(c, 4)
	c = binary.BigEndian.AppendUint16(c, 0x0001) // HKDF-SHA256
	c = binary.BigEndian.AppendUint16(c, 0x0001) // AES-128-GCM
	c = append(c, 0)                             // maximum_name_length
	c = append(c, byte(len(public)))
	c = append(c, public...)
	c = binary.BigEndian.AppendUint16(c, 0) // no extensions
	cfg := binary.BigEndian.AppendUint16(nil, 0xfe0d)
	cfg = binary.BigEndian.AppendUint16(cfg, uint16(len(c)))
	return append(cfg, c...)
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:4433", "address to listen on")
	certFile := fs.String("cert", "", "certificate (PEM)")
	keyFile := fs.String("key", "", "key (PEM)")
	echList := fs.String("echconfig", "", "ECHConfigList file (from echconfig)")
	echKey := fs.String("echkey", "", "ECH private key file (from echconfig)")
	fs.Parse(args)
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		return err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	if *echList != "" {
		list, err := os.ReadFile(*echList)
		if err != nil {
			return err
		}
		key, err := os.ReadFile(*echKey)
		if err != nil {
			return err
		}
		cfg.EncryptedClientHelloKeys = []tls.EncryptedClientHelloKey{{Config: list[2:], PrivateKey: key, SendAsRetry: true}}
	}
	ln, err := tls.Listen("tcp", *listen, cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ok %s\n", r.Host)
	}), ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

// Package tlshello reads what a TLS ClientHello offers: the server name
// (SNI), the ALPN protocol names, the offered versions and whether an
// encrypted_client_hello (ECH) extension is present.
//
// It reads one whole handshake message, as TLS records over TCP or CRYPTO
// frames in QUIC Initial packets carry it once reassembled; HandshakeLen
// tells a reassembler when the message is complete. Parse allocates
// nothing: the Hello's slices alias the message.
//
// # What a ClientHello shows
//
// The server name travels in clear text in the server_name extension.
// With ECH (RFC 9849) the real name is encrypted inside the outer
// ClientHello, and the outer one carries only the public name of the
// client-facing server: Hello.ECH says so. A client with no ECH
// configuration may still send a GREASE encrypted_client_hello
// extension, which on the wire cannot be told from a real one.
//
// The wire is hostile: lengths that disagree with each other, a message
// cut short, a repeated extension, are errors (see the Err variables),
// never a panic or a read past the message.
package tlshello

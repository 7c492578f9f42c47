#!/usr/bin/python3
"""The server side of a protocol's TLS start, for the project's STARTTLS
test captures: it answers a real client (openssl s_client -starttls,
curl, psql) up to the point where TLS starts, completes the TLS handshake
with Python's ssl module, and closes. The client bytes before TLS, its
ClientHello and its server name are what the capture is for; the server
only has to say what each client waits for.

Usage: starttls-server.py PROTO PORT CERT KEY
PROTO: smtp, imap, pop3, ftp, xmpp, ldap, postgres, mysql, rdp.
"""
import socket
import ssl
import struct
import sys
import threading


def lines_until(f, done):
    """Reads client lines until done(line) is true; returns that line."""
    while True:
        line = f.readline()
        if not line:
            raise EOFError
        if done(line):
            return line


def smtp(s, f):
    s.sendall(b"220 mail.example ESMTP test\r\n")
    while True:
        line = f.readline()
        if not line:
            raise EOFError
        cmd = line.strip().upper()
        if cmd.startswith((b"EHLO", b"HELO", b"LHLO")):
            s.sendall(b"250-mail.example\r\n250-PIPELINING\r\n250 STARTTLS\r\n")
        elif cmd == b"STARTTLS":
            s.sendall(b"220 2.0.0 Ready to start TLS\r\n")
            return
        else:
            s.sendall(b"250 ok\r\n")


def imap(s, f):
    s.sendall(b"* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n")
    while True:
        line = f.readline()
        if not line:
            raise EOFError
        tag, _, cmd = line.strip().partition(b" ")
        if cmd.upper() == b"STARTTLS":
            s.sendall(tag + b" OK Begin TLS negotiation now\r\n")
            return
        if cmd.upper() == b"CAPABILITY":
            s.sendall(b"* CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED\r\n")
        s.sendall(tag + b" OK done\r\n")


def pop3(s, f):
    s.sendall(b"+OK POP3 ready\r\n")
    while True:
        line = f.readline()
        if not line:
            raise EOFError
        cmd = line.strip().upper()
        if cmd == b"STLS":
            s.sendall(b"+OK Begin TLS\r\n")
            return
        if cmd == b"CAPA":
            s.sendall(b"+OK\r\nSTLS\r\nUSER\r\n.\r\n")
        else:
            s.sendall(b"+OK\r\n")


def ftp(s, f):
    s.sendall(b"220 FTP ready\r\n")
    while True:
        line = f.readline()
        if not line:
            raise EOFError
        cmd = line.strip().upper()
        if cmd in (b"AUTH TLS", b"AUTH SSL"):
            s.sendall(b"234 Proceed with negotiation.\r\n")
            return
        if cmd == b"FEAT":
            s.sendall(b"211-Features:\r\n AUTH TLS\r\n211 End\r\n")
        else:
            s.sendall(b"502 not before TLS\r\n")


def xmpp(s, f):
    buf = b""
    while b">" not in buf.partition(b"<stream:stream")[2]:
        b = s.recv(4096)
        if not b:
            raise EOFError
        buf += b
    s.sendall(b"<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
              b"xmlns:stream='http://etherx.jabber.org/streams' id='1' from='chat.example' version='1.0'>"
              b"<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>"
              b"</stream:features>")
    buf = b""
    while b"<starttls" not in buf:
        b = s.recv(4096)
        if not b:
            raise EOFError
        buf += b
    s.sendall(b"<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")


def recv_exact(s, n):
    out = b""
    while len(out) < n:
        b = s.recv(n - len(out))
        if not b:
            raise EOFError
        out += b
    return out


def ber_element(s):
    """Reads one BER element; returns its contents."""
    tag, first = recv_exact(s, 2)
    n = first
    if first & 0x80:
        n = int.from_bytes(recv_exact(s, first & 0x7f), "big")
    return tag, recv_exact(s, n)


def ldap(s, f):
    tag, msg = ber_element(s)  # the ExtendedRequest: SEQUENCE { messageID, [APPLICATION 23] ... }
    if tag != 0x30 or msg[0] != 0x02:
        raise ValueError("not an LDAPMessage")
    msgid = msg[: 2 + msg[1]]
    oid = b"1.3.6.1.4.1.1466.20037"
    # ExtendedResponse [APPLICATION 24]: resultCode success, matchedDN "",
    # diagnosticMessage "", responseName [10] the StartTLS OID.
    body = b"\x0a\x01\x00\x04\x00\x04\x00" + b"\x8a" + bytes([len(oid)]) + oid
    resp = bytes([0x78, len(body)]) + body
    m = msgid + resp
    s.sendall(bytes([0x30, len(m)]) + m)


def postgres(s, f):
    n, code = struct.unpack(">II", recv_exact(s, 8))
    if n != 8 or code != 80877103:
        raise ValueError("not an SSLRequest")
    s.sendall(b"S")


def mysql(s, f):
    # A protocol-10 handshake offering CLIENT_SSL (0x800) and
    # CLIENT_PROTOCOL_41 (0x200), with mysql_native_password.
    caps = 0x00000800 | 0x00000200 | 0x00008000 | 0x00080000 | 0x00000008 | 0x00000001
    salt = b"abcdefgh" + b"ijklmnopqrst"
    p = (b"\x0a" + b"8.0.0-test\x00" + struct.pack("<I", 1) + salt[:8] + b"\x00"
         + struct.pack("<H", caps & 0xffff) + b"\x21" + struct.pack("<H", 2)
         + struct.pack("<H", caps >> 16) + bytes([21]) + b"\x00" * 10 + salt[8:] + b"\x00"
         + b"mysql_native_password\x00")
    s.sendall(struct.pack("<I", len(p))[:3] + b"\x00" + p)
    hdr = recv_exact(s, 4)
    n = int.from_bytes(hdr[:3], "little")
    body = recv_exact(s, n)
    if not struct.unpack("<I", body[:4])[0] & 0x800:
        raise ValueError("the client did not ask for SSL")


def rdp(s, f):
    hdr = recv_exact(s, 4)  # TPKT
    n = struct.unpack(">H", hdr[2:])[0]
    recv_exact(s, n - 4)
    # X.224 Connection Confirm with RDP_NEG_RSP selecting PROTOCOL_SSL (1).
    neg = b"\x02\x00\x08\x00" + struct.pack("<I", 1)
    x224 = bytes([6 + len(neg), 0xd0, 0, 0, 0x12, 0x34, 0]) + neg
    s.sendall(b"\x03\x00" + struct.pack(">H", 4 + len(x224)) + x224)


PROTOS = {"smtp": smtp, "imap": imap, "pop3": pop3, "ftp": ftp, "xmpp": xmpp,
          "ldap": ldap, "postgres": postgres, "mysql": mysql, "rdp": rdp}


def serve(conn, proto, ctx):
    conn.settimeout(10)
    try:
        f = conn.makefile("rb", buffering=0)
        PROTOS[proto](conn, f)
        tls = ctx.wrap_socket(conn, server_side=True)
        try:
            tls.recv(1)
        except (ssl.SSLError, OSError):
            pass
        tls.close()
    except (EOFError, ValueError, OSError, ssl.SSLError) as e:
        print(f"{proto}: {e}", file=sys.stderr)
    finally:
        conn.close()


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in PROTOS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    proto, port, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(16)
    while True:
        conn, _ = ls.accept()
        threading.Thread(target=serve, args=(conn, proto, ctx), daemon=True).start()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Raw-socket HTTP clients for the project's captures: what curl will not
send. Each case opens its own connection, sends its bytes in the pieces
given, reads what the server answers, and closes.
Usage: rawclient.py HOST PORT
"""
import socket
import sys
import time

host, port = sys.argv[1], int(sys.argv[2])


def send(pieces, wait=0.05):
    s = socket.create_connection((host, port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for p in pieces:
        s.sendall(p.encode("latin-1"))
        time.sleep(wait)
    s.shutdown(socket.SHUT_WR)
    try:
        while s.recv(65536):
            pass
    except socket.timeout:
        pass
    s.close()


H = "Host: raw.example:%d\r\n" % port
pipelined = "".join("GET /pipe/%d HTTP/1.1\r\n%s\r\n" % (i, H) for i in range(10))
body = "field=value&other=1"
chunk = "hello chunked world"

send([pipelined])                                       # 10 pipelined requests, one write
send(["GET /sp", "lit/three?pieces=1 HTTP/1.1\r\nHo", "st: raw.example:%d\r\n\r\n" % port])
send(["GET http://proxy.example/absolute?form=1 HTTP/1.1\r\nHost: proxy.example\r\n\r\n"])
send(["POST /form HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s" % (H, len(body), body) +
      "GET /after-post HTTP/1.1\r\n%s\r\n" % H])
send(["POST /upload HTTP/1.1\r\n%sTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (H, len(chunk), chunk) +
      "GET /after-chunked HTTP/1.1\r\n%s\r\n" % H])
send(["GET /http10-no-host HTTP/1.0\r\n\r\n"])
send(["HEAD /head HTTP/1.1\r\n%s\r\n" % H, "DELETE /item/7 HTTP/1.1\r\n%s\r\n" % H])

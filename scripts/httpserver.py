#!/usr/bin/env python3
"""A small HTTP/1.1 keep-alive server for the project's captures.

Answers every method on every path with a short body, reading request
bodies (Content-Length or chunked) so that pipelined requests work.
Usage: httpserver.py ADDRESS PORT [--fastopen]
With --fastopen the listening socket accepts TCP Fast Open (data in the
SYN, net.ipv4.tcp_fastopen bit 2 on the server's side).
"""
import http.server
import socketserver
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per response, sent at once: without these, headers and body
    # go out separately and Nagle meets delayed ACK (40 ms a request).
    disable_nagle_algorithm = True
    wbufsize = 65536

    def log_message(self, *args):
        pass

    def _drain_body(self):
        if self.headers.get("Transfer-Encoding", "").lower().endswith("chunked"):
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return
                self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length", "0") or 0)
        if n:
            self.rfile.read(n)

    def handle_one_request(self):
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline:
            self.close_connection = True
            return
        if not self.parse_request():
            return
        self._drain_body()
        body = b"ok " + self.path.encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:  # HTTP/1.0, or "Connection: close": say so, or a client may send its next request here
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fastopen = False

    def server_activate(self):
        if self.fastopen:
            import socket
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
        super().server_activate()


if __name__ == "__main__":
    addr, port = sys.argv[1], int(sys.argv[2])
    Server.fastopen = "--fastopen" in sys.argv[3:]
    if ":" in addr:
        Server.address_family = __import__("socket").AF_INET6
    Server((addr, port), Handler).serve_forever()

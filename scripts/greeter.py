#!/usr/bin/env python3
"""The server half of server-first text protocols, for tests of what a
real client (curl, ssh) sends first: on each PORT:GREETING pair it
listens on ADDRESS, sends GREETING and CRLF to every connection, reads
one line, answers with the greeting's refusal and closes. Enough for
curl to send its EHLO, CAPA, CAPABILITY or USER, and for ssh its banner.
Usage: greeter.py ADDRESS PORT:GREETING...
"""
import socket
import socketserver
import sys
import threading

REFUSAL = {"220": b"500 no\r\n", "+OK": b"-ERR no\r\n", "* OK": b"* BYE no\r\n"}


def handler_for(greeting):
    class Handler(socketserver.StreamRequestHandler):
        timeout = 10

        def handle(self):
            self.wfile.write(greeting.encode() + b"\r\n")
            try:
                self.rfile.readline(4096)
            except (socket.timeout, OSError):
                return
            for prefix, answer in REFUSAL.items():
                if greeting.startswith(prefix):
                    self.wfile.write(answer)
    return Handler


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    addr = sys.argv[1]
    servers = []
    for spec in sys.argv[2:]:
        port, greeting = spec.split(":", 1)
        srv = Server((addr, int(port)), handler_for(greeting))
        servers.append(srv)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()

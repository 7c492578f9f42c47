"""redis-py against `urldedupd serve --resp-listen`, for the RESP tests.

    resp_client.py commands PORT [TOKEN]   every command, results as JSON
    resp_client.py add PORT KEY FILE       add FILE's URLs (BF.ADD pipelined
                                           and BF.MADD, alternately); print
                                           those answered new, one a line
"""
import json
import socket
import sys

import redis


def commands(port, token):
    r = redis.Redis(host="127.0.0.1", port=port, password=token or None,
                    client_name="resp-test")
    out = {}
    out["ping"] = r.ping()
    out["echo"] = r.echo("hello").decode()
    out["add"] = [r.bf().add("urls", "http://py.example/a"),
                  r.bf().add("urls", "HTTP://PY.EXAMPLE/a"),
                  r.bf().add("crawl", "http://py.example/a")]
    out["madd"] = r.bf().madd("crawl", "http://py.example/b", "http://py.example/a",
                              "http://py.example/b", "3f2a0c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39")
    out["exists"] = [r.bf().exists("crawl", "http://py.example/b"),
                     r.bf().exists("other", "http://py.example/b")]
    out["mexists"] = r.bf().mexists("urls", "http://py.example/a", "http://py.example/zz")
    info = r.bf().info("urls")
    out["info"] = {"capacity": info.capacity, "size": info.size, "filters": info.filterNum,
                   "items": info.insertedNum, "expansion": info.expansionRate}
    out["card"] = r.execute_command("BF.CARD", "urls")
    out["client_name"] = r.client_getname()
    out["client_id"] = r.client_id() > 0
    out["select"] = r.execute_command("SELECT", 0)
    out["command_count"] = r.command_count()
    try:
        r.execute_command("FLUSHALL")
        out["unknown"] = "no error"
    except redis.ResponseError as e:
        out["unknown"] = str(e)
    try:
        r.bf().add("urls", "")
        out["empty"] = "no error"
    except redis.ResponseError as e:
        out["empty"] = str(e)
    p = r.pipeline(transaction=False)
    for i in range(50):
        p.execute_command("BF.ADD", "pipe", "http://py.example/p/%d" % (i % 25))
        p.ping()
    res = p.execute()
    out["pipeline"] = [x if isinstance(x, int) else bool(x) for x in res]
    out["resp3"] = resp3(port, token)
    print(json.dumps(out, sort_keys=True))


def resp3(port, token):
    """HELLO 3 over a plain socket (redis-py 4.3 speaks only RESP2)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    auth = b""
    if token:
        auth = b"$4\r\nAUTH\r\n$7\r\ndefault\r\n$%d\r\n%s\r\n" % (len(token), token.encode())
    n = 2 + (3 if token else 0)
    s.sendall(b"*%d\r\n$5\r\nHELLO\r\n$1\r\n3\r\n" % n + auth +
              b"*2\r\n$7\r\nBF.INFO\r\n$4\r\nurls\r\n"
              b"*3\r\n$10\r\nBF.MEXISTS\r\n$4\r\nurls\r\n$19\r\nhttp://py.example/a\r\n"
              b"*2\r\n$6\r\nCLIENT\r\n$7\r\nGETNAME\r\n"
              b"*1\r\n$4\r\nQUIT\r\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return data.decode("latin-1")


def add(port, key, path):
    r = redis.Redis(host="127.0.0.1", port=port)
    with open(path) as f:
        urls = [l.rstrip("\n") for l in f if l.strip()]
    out = []
    for start in range(0, len(urls), 100):
        batch = urls[start:start + 100]
        if (start // 100) % 2 == 0:
            res = r.bf().madd(key, *batch)
        else:
            p = r.pipeline(transaction=False)
            for u in batch:
                p.execute_command("BF.ADD", key, u)
            res = p.execute()
        if len(res) != len(batch):
            sys.exit("%d answers for %d URLs" % (len(res), len(batch)))
        out.extend(u for u, new in zip(batch, res) if new == 1)
    sys.stdout.write("".join(u + "\n" for u in out))


if __name__ == "__main__":
    if sys.argv[1] == "commands":
        commands(int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "")
    else:
        add(int(sys.argv[2]), sys.argv[3], sys.argv[4])

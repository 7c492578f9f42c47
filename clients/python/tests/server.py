"""Where the tests find a running ``urldedupd serve`` (Go's
TestPythonClient starts it and sets these; without them the tests skip)."""

import os
import unittest
import uuid

URL = os.environ.get("URLDEDUPD_TEST_URL")  # redis://127.0.0.1:PORT
SOCKET_URL = os.environ.get("URLDEDUPD_TEST_SOCKET_URL")  # unix:///…, the same state
TOKEN_URL = os.environ.get("URLDEDUPD_TEST_TOKEN_URL")  # another serve, with --token
TOKEN = os.environ.get("URLDEDUPD_TEST_TOKEN")


def need_server(test):
    if not URL:
        raise unittest.SkipTest("URLDEDUPD_TEST_URL not set (go test -run TestPythonClient ./cmd/urldedupd)")


def fresh(n=1, path="page"):
    """n URLs no test has used yet (the state outlives a test)."""
    host = uuid.uuid4().hex[:12]
    return ["http://%s.example/%s/%d" % (host, path, i) for i in range(n)]


REDIS_URL = os.environ.get("URLDEDUPD_TEST_REDIS_URL")  # a real redis-server, for task pools


def need_redis(test):
    if not REDIS_URL:
        raise unittest.SkipTest("URLDEDUPD_TEST_REDIS_URL not set (go test -run TestPythonClient ./cmd/urldedupd)")

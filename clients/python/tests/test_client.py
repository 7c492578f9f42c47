import unittest

import redis

import urldedupd
from tests.server import SOCKET_URL, TOKEN, TOKEN_URL, URL, fresh, need_server


class ClientTest(unittest.TestCase):
    def setUp(self):
        need_server(self)
        self.c = urldedupd.Client(URL)
        self.addCleanup(self.c.close)

    def test_add_then_duplicate(self):
        a, b = fresh(2)
        self.assertEqual(self.c.add([a, b, a]), [True, True, False])
        self.assertEqual(self.c.add([b]), [False])
        self.assertEqual(self.c.add([]), [])

    def test_default_key_normalizes_as_the_sensor(self):
        (u,) = fresh(1)
        spelled = u.replace("http://", "HTTP://").replace(".example/", ".EXAMPLE:80/") + "#fragment"
        self.assertEqual(self.c.add([u, spelled]), [True, False])

    def test_exists_adds_nothing(self):
        a, b = fresh(2)
        self.assertEqual(self.c.exists([a, b]), [False, False])
        self.assertEqual(self.c.add([a]), [True])
        self.assertEqual(self.c.exists([a, b]), [True, False])
        self.assertEqual(self.c.add([b]), [True])

    def test_keys_are_namespaces(self):
        (u,) = fresh(1)
        crawl = urldedupd.Client(URL, key="crawl-a")
        other = urldedupd.Client(URL, key="crawl-b")
        self.addCleanup(crawl.close)
        self.addCleanup(other.close)
        self.assertEqual(crawl.add([u]), [True])
        self.assertEqual(crawl.add([u]), [False])
        self.assertEqual(other.add([u]), [True])
        self.assertEqual(self.c.exists([u]), [False])

    def test_batches_keep_order(self):
        urls = fresh(100)
        small = urldedupd.Client(URL, batch=7)
        self.addCleanup(small.close)
        # Every URL twice, the second time in a later batch or the same one.
        got = small.add(urls[:50] + urls[:50] + urls[50:] + urls[50:])
        self.assertEqual(got, [True] * 50 + [False] * 50 + [True] * 50 + [False] * 50)
        self.assertEqual(small.exists(urls + fresh(3)), [True] * 100 + [False] * 3)

    def test_a_scrapy_fingerprint_is_an_item(self):
        fp = fresh(1)[0][7:19].ljust(40, "a")  # 40 hexadecimal digits
        fps = urldedupd.Client(URL, key="fp")
        self.addCleanup(fps.close)
        self.assertEqual(fps.add([fp, fp.upper()]), [True, False])

    def test_unix_socket_same_state(self):
        if not SOCKET_URL:
            self.skipTest("URLDEDUPD_TEST_SOCKET_URL not set")
        a, b = fresh(2)
        self.assertEqual(self.c.add([a]), [True])
        with urldedupd.Client(SOCKET_URL) as s:
            self.assertTrue(s.ping())
            self.assertEqual(s.add([a, b]), [False, True])

    def test_bad_items_raise(self):
        with self.assertRaises(redis.exceptions.ResponseError):
            self.c.add(["http://ok.example/", " "])
        with self.assertRaises(redis.exceptions.ResponseError):
            self.c.add(["http://big.example/" + "x" * 70000])
        with self.assertRaises(ValueError):
            urldedupd.Client(URL, key="")
        with self.assertRaises(ValueError):
            urldedupd.Client(URL, batch=0)

    def test_token(self):
        if not TOKEN_URL:
            self.skipTest("URLDEDUPD_TEST_TOKEN_URL not set")
        (u,) = fresh(1)
        with urldedupd.Client(TOKEN_URL) as anon:
            with self.assertRaises(redis.exceptions.AuthenticationError):  # NOAUTH
                anon.add([u])
        with urldedupd.Client(TOKEN_URL, token="wrong") as wrong:
            with self.assertRaises(redis.exceptions.RedisError) as cm:
                wrong.ping()
            self.assertIn("WRONGPASS", str(cm.exception))
        with urldedupd.Client(TOKEN_URL, token=TOKEN) as ok:
            self.assertEqual(ok.add([u, u]), [True, False])


if __name__ == "__main__":
    unittest.main()

import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import uuid

import redis

from tests.server import REDIS_URL, need_redis
from urldedupd.tasks import GROUP, TaskPool

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fill(prefix, urls):
    r = redis.Redis.from_url(REDIS_URL)
    for u in urls:
        r.xadd("%s:task_pool" % prefix, {"url": u, "number": "n1/10.0.0.2/1"})
    r.close()


def wait_for(what, ok, limit=30.0):
    end = time.monotonic() + limit
    while not ok():
        if time.monotonic() > end:
            raise AssertionError("not %s after %.0f s" % (what, limit))
        time.sleep(0.05)


class TaskPoolTest(unittest.TestCase):
    def setUp(self):
        need_redis(self)
        self.prefix = "t" + uuid.uuid4().hex[:10]

    def test_claim_ack_reclaim(self):
        urls = ["http://tasks.example/%d" % i for i in range(20)]
        a = TaskPool(REDIS_URL, consumer="a", prefix=self.prefix, idle=0.2)
        fill(self.prefix, urls)
        first = a.claim(5)
        self.assertEqual([u for _, u in first], urls[:5])
        b = TaskPool(REDIS_URL, consumer="b", prefix=self.prefix, idle=0.2)
        time.sleep(0.3)  # a's claims are idle now
        got = b.claim(100)
        self.assertEqual(sorted(u for _, u in got), sorted(urls))
        b.ack(i for i, _ in got)
        self.assertEqual(b.pending(), 0)
        self.assertEqual(b.claim(100), [])

    def test_killed_crawler_loses_nothing(self):
        """A crawler process claims URLs and is killed (SIGKILL): another
        is handed them again; none is lost, none handed to it twice."""
        urls = ["http://killed.example/%d" % i for i in range(30)]
        fill(self.prefix, urls)
        script = textwrap.dedent("""
            import sys, time
            from urldedupd.tasks import TaskPool
            pool = TaskPool(sys.argv[1], consumer="doomed", prefix=sys.argv[2], idle=0)
            for _, u in pool.claim(10):
                print(u, flush=True)
            time.sleep(600)
        """)
        env = dict(os.environ, PYTHONPATH=HERE)
        p = subprocess.Popen([sys.executable, "-c", script, REDIS_URL, self.prefix], stdout=subprocess.PIPE, env=env, text=True)
        try:
            claimed = [p.stdout.readline().strip() for _ in range(10)]
        finally:
            p.send_signal(signal.SIGKILL)
            p.wait(30)
            p.stdout.close()
        self.assertEqual(claimed, urls[:10])
        other = TaskPool(REDIS_URL, consumer="survivor", prefix=self.prefix, idle=0.2)
        taken = []
        end = time.monotonic() + 30
        while len(set(taken)) < len(urls) and time.monotonic() < end:
            got = other.claim(100)
            taken.extend(u for _, u in got)
            other.ack(i for i, _ in got)
            time.sleep(0.1)
        lost = set(urls) - set(taken)
        twice = [u for u in set(taken) if taken.count(u) > 1]
        self.assertEqual((sorted(lost), twice), ([], []))
        self.assertEqual(other.pending(), 0)

    def test_group_made_once(self):
        TaskPool(REDIS_URL, consumer="x", prefix=self.prefix)
        TaskPool(REDIS_URL, consumer="y", prefix=self.prefix)  # BUSYGROUP is no error
        groups = redis.Redis.from_url(REDIS_URL).xinfo_groups("%s:task_pool" % self.prefix)
        self.assertEqual([g["name"] for g in groups], [GROUP.encode()])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class TaskPoolSpiderTest(unittest.TestCase):
    """A real crawl: Scrapy, in a process of its own, fetches a task pool's
    URLs from a real HTTP server (python3 -m http.server on loopback)."""

    def setUp(self):
        need_redis(self)
        self.prefix = "s" + uuid.uuid4().hex[:10]
        self.site = tempfile.TemporaryDirectory()
        for i in range(25):
            with open(os.path.join(self.site.name, "p%d.html" % i), "w") as f:
                f.write("<html><body>page %d</body></html>" % i)
        self.port = free_port()
        self.log = open(os.path.join(self.site.name, "..access-%s.log" % self.prefix), "w+")
        self.server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(self.port)],
                                       cwd=self.site.name, stderr=self.log, stdout=subprocess.DEVNULL)
        wait_for("the HTTP server listening", self.listening)

    def tearDown(self):
        self.server.kill()
        self.server.wait(30)
        self.log.close()
        os.unlink(self.log.name)
        self.site.cleanup()

    def listening(self):
        try:
            socket.create_connection(("127.0.0.1", self.port), 1).close()
            return True
        except OSError:
            return False

    def crawl(self, out):
        script = textwrap.dedent("""
            import sys
            from scrapy.crawler import CrawlerProcess
            from urldedupd.scrapy import TaskPoolSpider

            class Pages(TaskPoolSpider):
                name = "pages"
                def parse(self, response):
                    with open(sys.argv[3], "a") as f:
                        f.write(response.url + "\\n")

            p = CrawlerProcess(settings={"URLDEDUPD_TASKS_URL": sys.argv[1], "URLDEDUPD_TASKS_PREFIX": sys.argv[2],
                                         "LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False,
                                         "URLDEDUPD_TASKS_BATCH": 7, "ROBOTSTXT_OBEY": False})
            p.crawl(Pages)
            p.start()
        """)
        env = dict(os.environ, PYTHONPATH=HERE)
        subprocess.run([sys.executable, "-c", script, REDIS_URL, self.prefix, out], env=env, check=True, timeout=120)

    def test_spider_fetches_the_pool_once(self):
        urls = ["http://127.0.0.1:%d/p%d.html" % (self.port, i) for i in range(25)]
        fill(self.prefix, urls)
        out = os.path.join(self.site.name, "..fetched")
        self.crawl(out)
        with open(out) as f:
            fetched = f.read().split()
        self.assertEqual(sorted(fetched), sorted(urls))
        self.log.seek(0)
        gets = [line for line in self.log if '"GET /p' in line]
        self.assertEqual(len(gets), len(urls), "the server's log: each page fetched once")
        self.assertEqual(TaskPool(REDIS_URL, prefix=self.prefix).pending(), 0, "every URL acknowledged")
        self.crawl(out)  # the pool is empty now: nothing fetched again
        with open(out) as f:
            self.assertEqual(len(f.read().split()), len(urls))

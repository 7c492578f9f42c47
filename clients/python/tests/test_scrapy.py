import unittest

import scrapy
from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.test import get_crawler

import urldedupd
from tests.server import TOKEN, TOKEN_URL, URL, fresh, need_server
from urldedupd.scrapy import DupeFilter


class Spider(scrapy.Spider):
    name = "t"


def dupefilter(**settings):
    """A DupeFilter made as Scrapy makes it, from a crawler's settings."""
    s = {"DUPEFILTER_CLASS": "urldedupd.scrapy.DupeFilter", "URLDEDUPD_URL": URL}
    s.update(settings)
    crawler = get_crawler(Spider, s)
    df = DupeFilter.from_crawler(crawler)
    df.open()
    return df, crawler


class DupeFilterTest(unittest.TestCase):
    def setUp(self):
        need_server(self)

    def filter(self, **settings):
        df, crawler = dupefilter(**settings)
        self.addCleanup(df.close, "finished")
        return df, crawler

    def test_request_fingerprint_by_default(self):
        df, crawler = self.filter()
        (u,) = fresh(1)
        get, post = scrapy.Request(u), scrapy.Request(u, method="POST", body=b"q=1")
        self.assertFalse(df.request_seen(get))
        self.assertTrue(df.request_seen(scrapy.Request(u)))
        self.assertFalse(df.request_seen(post))  # a POST is another request
        self.assertTrue(df.request_seen(post))
        # The fingerprint is Scrapy's own, as RFPDupeFilter computes it.
        self.assertEqual(df.item(get), RFPDupeFilter.from_crawler(crawler).request_fingerprint(get))
        self.assertEqual(df.client.key, "scrapy")
        with urldedupd.Client(URL, key="scrapy") as c:
            self.assertEqual(c.exists([df.item(get), df.item(scrapy.Request(u + "x"))]), [True, False])

    def test_processes_share_the_seen_set(self):
        one, _ = self.filter(URLDEDUPD_KEY="shared-crawl")
        two, _ = self.filter(URLDEDUPD_KEY="shared-crawl")
        urls = fresh(20)
        first = [one.request_seen(scrapy.Request(u)) for u in urls[:10]]
        second = [two.request_seen(scrapy.Request(u)) for u in urls]
        self.assertEqual(first, [False] * 10)
        self.assertEqual(second, [True] * 10 + [False] * 10)

    def test_url_mode_shares_the_sensors_key(self):
        df, _ = self.filter(URLDEDUPD_FINGERPRINT="url")
        self.assertEqual(df.client.key, "urls")
        a, b = fresh(2)
        with urldedupd.Client(URL) as sensor_side:  # the default key, as filter and the sensor
            self.assertEqual(sensor_side.add([a]), [True])
            self.assertTrue(df.request_seen(scrapy.Request(a + "#x")))  # normalized as the sensor does
            self.assertFalse(df.request_seen(scrapy.Request(b, method="POST")))
            self.assertTrue(df.request_seen(scrapy.Request(b)))  # the same URL: one item
            self.assertEqual(sensor_side.exists([b]), [True])

    def test_log_counts_filtered(self):
        df, crawler = self.filter()
        spider = Spider.from_crawler(crawler)
        (u,) = fresh(1)
        df.request_seen(scrapy.Request(u))
        for _ in range(3):
            self.assertTrue(df.request_seen(scrapy.Request(u)))
            df.log(scrapy.Request(u), spider)
        self.assertEqual(crawler.stats.get_value("dupefilter/filtered", spider=spider), 3)

    def test_scrapy_redis_interface(self):
        # scrapy-redis's scheduler (not packaged by Debian) makes the filter
        # with from_spider, asks request_seen, calls log, and clear on
        # flush: these are the calls it makes.
        crawler = get_crawler(Spider, {"URLDEDUPD_URL": URL, "URLDEDUPD_KEY": "redis-sched"})
        spider = Spider.from_crawler(crawler)
        df = DupeFilter.from_spider(spider)
        self.addCleanup(df.close, "finished")
        (u,) = fresh(1)
        self.assertFalse(df.request_seen(scrapy.Request(u)))
        with self.assertLogs("urldedupd.scrapy", "WARNING"):
            df.clear()
        self.assertTrue(df.request_seen(scrapy.Request(u)))  # clear forgot nothing
        df.log(scrapy.Request(u), spider)

    def test_settings(self):
        with self.assertRaises(ValueError):
            dupefilter(URLDEDUPD_FINGERPRINT="body")
        df, _ = self.filter(URLDEDUPD_FINGERPRINT="url", URLDEDUPD_KEY="mine")
        self.assertEqual(df.client.key, "mine")
        if TOKEN_URL:
            import redis
            with self.assertRaises(redis.exceptions.RedisError):
                dupefilter(URLDEDUPD_URL=TOKEN_URL)  # open pings: no token, refused
            df, _ = self.filter(URLDEDUPD_URL=TOKEN_URL, URLDEDUPD_TOKEN=TOKEN)
            (u,) = fresh(1)
            self.assertFalse(df.request_seen(scrapy.Request(u)))
            self.assertTrue(df.request_seen(scrapy.Request(u)))


if __name__ == "__main__":
    unittest.main()

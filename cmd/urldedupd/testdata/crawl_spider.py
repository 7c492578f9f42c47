"""The spider of TestCrawl: follows every link of a generated site.

scrapy runspider crawl_spider.py -a start=URL -a seed=K -a barrier=DIR
(settings from the command line: DUPEFILTER_CLASS and URLDEDUPD_URL).

Several of these crawl one site at once, sharing urldedupd through the
dupefilter. So that they really compete, each writes DIR/ready-K and
waits for DIR/go before its first request, and follows a page's links in
an order of its own (shuffled with seed K). The start request is Scrapy's
usual one (dont_filter: each process fetches the start page once); every
other request goes through the dupefilter.
"""

import os
import random
import time

import scrapy


class SiteSpider(scrapy.Spider):
    name = "site"

    def start_requests(self):
        self.rng = random.Random(int(self.seed))
        open(os.path.join(self.barrier, "ready-" + self.seed), "w").close()
        go = os.path.join(self.barrier, "go")
        deadline = time.monotonic() + 300
        while not os.path.exists(go):
            if time.monotonic() > deadline:
                raise RuntimeError("no %s within 300 s" % go)
            time.sleep(0.02)
        yield scrapy.Request(self.start, dont_filter=True)

    def parse(self, response):
        links = response.css("a::attr(href)").getall()
        self.rng.shuffle(links)
        for href in links:
            yield response.follow(href, callback=self.parse)

"""A Scrapy dupefilter whose seen-set is a urldedupd state.

In a project's settings::

    DUPEFILTER_CLASS = "urldedupd.scrapy.DupeFilter"
    URLDEDUPD_URL = "redis://127.0.0.1:6380"   # or "unix:///run/urldedupd/resp.sock"
    URLDEDUPD_KEY = "scrapy"                   # the namespace (see below)
    URLDEDUPD_FINGERPRINT = "request"          # or "url"
    URLDEDUPD_TOKEN = None                     # serve's --token, if any

Every crawler process pointed at one serve shares one seen-set: a
request is scheduled by the first process that asks, and dropped as a
duplicate by every other, now and in later runs (the state persists).

URLDEDUPD_FINGERPRINT "request" (the default) decides on Scrapy's request
fingerprint, as Scrapy's own RFPDupeFilter does (a POST and a GET of one
URL are two requests); the default key is then "scrapy". "url" decides on
the request's URL, which serve normalizes as the capture sensor does; the
default key is then "urls", the server's default key, so that a crawler
and the sensor share one state.

The filter implements Scrapy's BaseDupeFilter interface (from_settings,
from_crawler, request_seen, open, close, log) and from_spider and clear,
which scrapy-redis's scheduler calls: with ``SCHEDULER =
"scrapy_redis.scheduler.Scheduler"`` and DUPEFILTER_CLASS as above,
scrapy-redis keeps the request queue in Redis and urldedupd the seen-set.
clear does nothing (a urldedupd state never forgets), so set
``SCHEDULER_PERSIST = True`` to say so: scrapy-redis calls clear when it
closes without it.

A request with dont_filter=True is never looked up (the scheduler does
not ask). When serve cannot be reached, request_seen raises: the crawl
stops rather than fetch duplicates.
"""

import logging
import os

import scrapy
from scrapy import signals
from scrapy.dupefilters import BaseDupeFilter

from .client import DEFAULT_KEY, Client
from .tasks import TaskPool

#: The key fingerprints go to unless URLDEDUPD_KEY says otherwise.
FINGERPRINT_KEY = "scrapy"

_MODES = ("request", "url")


def _default_fingerprint(request):
    """Scrapy's request fingerprint in hexadecimal, without a crawler."""
    try:  # Scrapy 2.7 and later
        from scrapy.utils.request import fingerprint
    except ImportError:  # pragma: no cover - older Scrapy
        from scrapy.utils.request import request_fingerprint
        return request_fingerprint(request)
    return fingerprint(request).hex()


class DupeFilter(BaseDupeFilter):
    """Scrapy's dupefilter interface over a urldedupd Client.

    fingerprint is "request" or "url" (see the module's doc);
    fingerprinter, Scrapy's request fingerprinter (the crawler's, when
    made by from_crawler). debug logs every filtered request, as
    DUPEFILTER_DEBUG does.
    """

    def __init__(self, client, *, fingerprint="request", fingerprinter=None,
                 debug=False, stats=None):
        if fingerprint not in _MODES:
            raise ValueError("URLDEDUPD_FINGERPRINT: %r, want one of %s" % (fingerprint, ", ".join(_MODES)))
        self.client = client
        self.mode = fingerprint
        self.fingerprinter = fingerprinter
        self.debug = debug
        self.stats = stats
        self.logdupes = True
        self.logger = logging.getLogger(__name__)

    @classmethod
    def from_settings(cls, settings, *, fingerprinter=None):
        mode = settings.get("URLDEDUPD_FINGERPRINT") or "request"
        key = settings.get("URLDEDUPD_KEY") or (DEFAULT_KEY if mode == "url" else FINGERPRINT_KEY)
        url = settings.get("URLDEDUPD_URL") or "redis://127.0.0.1:6379"
        client = Client(url, token=settings.get("URLDEDUPD_TOKEN") or None, key=key)
        return cls(client, fingerprint=mode, fingerprinter=fingerprinter,
                   debug=settings.getbool("DUPEFILTER_DEBUG"))

    @classmethod
    def from_crawler(cls, crawler):
        df = cls.from_settings(crawler.settings,
                               fingerprinter=getattr(crawler, "request_fingerprinter", None))
        df.stats = crawler.stats
        return df

    @classmethod
    def from_spider(cls, spider):
        """What scrapy-redis's scheduler calls."""
        return cls.from_crawler(spider.crawler)

    def item(self, request):
        """The item request is decided on: its fingerprint or its URL."""
        if self.mode == "url":
            return request.url
        if self.fingerprinter is not None:
            return self.fingerprinter.fingerprint(request).hex()
        return _default_fingerprint(request)

    def request_seen(self, request):
        return not self.client.add([self.item(request)])[0]

    def open(self):
        self.client.ping()  # a wrong URL or token fails the crawl's start

    def close(self, reason):
        self.client.close()

    def clear(self):
        """Does nothing: a urldedupd state never forgets (scrapy-redis
        calls this when SCHEDULER_PERSIST is off)."""
        self.logger.warning("urldedupd keeps its seen-set: clear does nothing (set SCHEDULER_PERSIST = True)")

    def log(self, request, spider):
        if self.debug:
            self.logger.debug("Filtered duplicate request: %(request)s", {"request": request},
                              extra={"spider": spider})
        elif self.logdupes:
            self.logger.debug("Filtered duplicate request: %(request)s - no more duplicates will be shown"
                              " (see DUPEFILTER_DEBUG to show all duplicates)", {"request": request},
                              extra={"spider": spider})
            self.logdupes = False
        stats = self.stats or getattr(getattr(spider, "crawler", None), "stats", None)
        if stats is not None:
            stats.inc_value("dupefilter/filtered", spider=spider)


class TaskPoolSpider(scrapy.Spider):
    """A spider whose start requests come from a task pool of urldedupd's
    de-duplication protocol (``urldedupd protocol host``).

    Settings: URLDEDUPD_TASKS_URL (the host's Redis), URLDEDUPD_TASKS_PREFIX
    (default "dedup"), URLDEDUPD_TASKS_CONSUMER (default the spider's name
    and the process id), URLDEDUPD_TASKS_IDLE (seconds before another
    crawler's unacknowledged URLs are taken over; default 60) and
    URLDEDUPD_TASKS_BATCH (URLs claimed at a time; default 100).

    The spider claims URLs until the pool has none left, requests each
    with ``dont_filter=True`` (the protocol has de-duplicated them), and
    acknowledges a URL when its response arrives. A URL whose fetch
    fails is not acknowledged: another crawler claims it after the idle
    time (at least once). Subclasses write ``parse`` as usual.
    """

    name = "urldedupd-tasks"

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._fetched, signal=signals.response_received)
        return spider

    def _pool(self):
        if getattr(self, "_task_pool", None) is None:
            s = self.settings
            url = s.get("URLDEDUPD_TASKS_URL")
            if not url:
                raise ValueError("TaskPoolSpider: URLDEDUPD_TASKS_URL is not set")
            consumer = s.get("URLDEDUPD_TASKS_CONSUMER") or "%s-%d" % (self.name, os.getpid())
            self._task_pool = TaskPool(url, consumer=consumer, prefix=s.get("URLDEDUPD_TASKS_PREFIX", "dedup"),
                                       idle=s.getfloat("URLDEDUPD_TASKS_IDLE", 60.0))
        return self._task_pool

    def start_requests(self):
        pool = self._pool()
        batch = self.settings.getint("URLDEDUPD_TASKS_BATCH", 100)
        while True:
            tasks = pool.claim(batch)
            if not tasks:
                return
            for task_id, url in tasks:
                yield scrapy.Request(url, dont_filter=True, meta={"urldedupd_task": task_id})

    def _fetched(self, response, request, spider):
        task_id = request.meta.get("urldedupd_task")
        if spider is self and task_id is not None:
            self._pool().ack([task_id])

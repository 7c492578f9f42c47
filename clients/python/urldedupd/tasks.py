"""A host's task pool in urldedupd's de-duplication protocol.

``urldedupd protocol host`` puts every URL the protocol found new into its
``task_pool``: a Redis stream (key ``<prefix>:task_pool``, prefix "dedup")
in the host's Redis, read by the consumer group "crawlers". A crawler
claims URLs, fetches them, and acknowledges them; URLs a crawler claimed
and never acknowledged (it died) are claimed again by another once they
have been idle for ``idle`` seconds. Every URL is handed out at least
once::

    from urldedupd.tasks import TaskPool

    pool = TaskPool("redis://10.1.0.2:6379/0", consumer="crawler-1")
    for task_id, url in pool.claim(100):
        fetch(url)
        pool.ack([task_id])
"""

import redis

#: The consumer group of a task pool's crawlers.
GROUP = "crawlers"
#: The protocol's default key prefix.
DEFAULT_PREFIX = "dedup"


class TaskPool:
    """A task pool, claimed as the consumer ``consumer``.

    ``url`` is the host's Redis (``redis://host:port/db`` or
    ``unix:///path``), or ``client`` a redis-py client. ``idle`` is how
    long, in seconds, a URL another consumer claimed stays unacknowledged
    before this one takes it over (0: never).
    """

    def __init__(self, url=None, consumer="crawler", prefix=DEFAULT_PREFIX, idle=60.0, client=None):
        if client is None:
            if url is None:
                raise ValueError("TaskPool needs url or client")
            client = redis.Redis.from_url(url)
        if not consumer:
            raise ValueError("TaskPool needs a consumer name")
        self.redis = client
        self.consumer = consumer
        self.key = "%s:task_pool" % prefix
        self.idle_ms = int(idle * 1000)
        try:
            self.redis.xgroup_create(self.key, GROUP, id="0", mkstream=True)
        except redis.ResponseError as e:
            if not str(e).startswith("BUSYGROUP"):
                raise

    def claim(self, count=100, block_ms=None):
        """Claim up to ``count`` URLs: first those idle at other consumers
        for ``idle``, then new ones, waiting for them at most ``block_ms``
        milliseconds (None: not at all). Returns a list of (id, url), both
        str."""
        out = []
        if self.idle_ms > 0:
            reply = self.redis.xautoclaim(self.key, GROUP, self.consumer, self.idle_ms, "0-0", count=count)
            out.extend(_tasks(reply[1]))
        if len(out) < count:
            reply = self.redis.xreadgroup(GROUP, self.consumer, {self.key: ">"}, count=count - len(out), block=block_ms)
            for _, entries in reply or []:
                out.extend(_tasks(entries))
        return out

    def ack(self, ids):
        """Acknowledge the URLs of ``ids`` as fetched: they are not handed
        out again."""
        ids = list(ids)
        if ids:
            self.redis.xack(self.key, GROUP, *ids)

    def pending(self):
        """How many URLs are claimed and not acknowledged."""
        return self.redis.xpending(self.key, GROUP)["pending"]

    def close(self):
        self.redis.close()


def _str(v):
    return v.decode() if isinstance(v, bytes) else v


def _tasks(entries):
    out = []
    for entry_id, fields in entries:
        if not fields:  # deleted from the stream meanwhile
            continue
        url = fields.get(b"url", fields.get("url"))
        if url is not None:
            out.append((_str(entry_id), _str(url)))
    return out

"""A client for urldedupd's Redis-protocol front end.

``urldedupd serve --resp-listen ADDR`` (or ``--resp-socket PATH``) answers
RedisBloom's commands: ``BF.MADD key item...`` says, for each item, 1 when
it is new (and now added) and 0 when it was seen before. Client wraps
that in two calls over redis-py::

    from urldedupd import Client

    with Client("redis://127.0.0.1:6380") as c:
        c.add(["http://example.com/a", "http://example.com/a"])  # [True, False]
        c.exists(["http://example.com/a", "http://example.com/b"])  # [True, False]

The key names a namespace. Under the server's default key ("urls" unless
serve's --resp-default-key says otherwise) an item is signed exactly as
the capture sensor, ``filter`` and the HTTP API sign a URL, so a crawler
using it shares their state; any other key is a namespace of its own.

``urldedupd.scrapy.DupeFilter`` is a Scrapy dupefilter on this client.
"""

from .client import DEFAULT_BATCH, DEFAULT_KEY, Client

__all__ = ["Client", "DEFAULT_BATCH", "DEFAULT_KEY"]

"""Client: batches of URLs decided by urldedupd over RESP (redis-py)."""

import redis

#: The server's default key: items under it are signed as the sensor's URLs.
DEFAULT_KEY = "urls"

#: Items sent in one BF.MADD or BF.MEXISTS (the server takes up to 100,000).
DEFAULT_BATCH = 1000


class Client:
    """A connection pool to one ``urldedupd serve`` speaking RESP.

    url is ``redis://host:port`` (TCP) or ``unix:///path/to/socket``;
    token, when serve runs with --token, is sent with AUTH (serve accepts a
    token only over TLS or loopback, or on its Unix socket). key is the
    namespace the items go to; batch, how many items one command carries.
    Further keyword arguments go to ``redis.Redis.from_url`` (for example
    socket_timeout).

    add and exists send all the batches of one call in one pipeline (one
    round trip when they fit the socket's buffers) and return one bool a
    URL, in order. An error from the server (an empty item, an item over
    64 KiB, a state that cannot decide) is raised as
    ``redis.exceptions.ResponseError``; a connection that fails, as
    ``redis.exceptions.ConnectionError`` (``AuthenticationError``, one of
    those, for a missing token; a wrong one is a ResponseError WRONGPASS). A command is never sent twice
    (redis-py's default: no retries; keep it so): one whose reply was
    lost may have added its items, and sent again would call them seen. A Client is as safe for use by
    several threads as the redis-py client under it.
    """

    def __init__(self, url="redis://127.0.0.1:6379", *, token=None,
                 key=DEFAULT_KEY, batch=DEFAULT_BATCH, **redis_kwargs):
        if not key:
            raise ValueError("urldedupd: the key is empty")
        if batch < 1:
            raise ValueError("urldedupd: batch must be at least 1, not %r" % (batch,))
        if token is not None:
            redis_kwargs["password"] = token
        self.key = key
        self.batch = batch
        self.redis = redis.Redis.from_url(url, **redis_kwargs)

    def add(self, urls):
        """Adds urls; returns one bool a URL: True when it was new."""
        return self._decide("BF.MADD", urls)

    def exists(self, urls):
        """Looks urls up without adding them; True when seen before."""
        return self._decide("BF.MEXISTS", urls)

    def ping(self):
        """Checks the server answers (and that the token is right)."""
        return self.redis.ping()

    def close(self):
        """Closes the connections."""
        self.redis.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _decide(self, command, urls):
        urls = list(urls)
        if not urls:
            return []
        chunks = [urls[i:i + self.batch] for i in range(0, len(urls), self.batch)]
        if len(chunks) == 1:
            replies = [self.redis.execute_command(command, self.key, *chunks[0])]
        else:
            pipe = self.redis.pipeline(transaction=False)
            for chunk in chunks:
                pipe.execute_command(command, self.key, *chunk)
            replies = pipe.execute()
        return [bool(r) for reply in replies for r in reply]

"""An HTTP transport whose connection pool does per request only the work a request needs.

httpcore's pool, each time a request comes or a response is closed, asks every connection it
holds whether it has expired; on an idle connection that asks the socket, through anyio's
typed attributes, whether the server closed it. With 32 cases at once on one served agent that
was 12% of the command's CPU (benchmarks/bench_served_loop.py, 1,000 cases: 7% in
``has_expired`` alone, 3% in the pool's list building). Here the pool works only when a
request waits, and asks only the connection about to be given it: one that expired is closed
then and the next one tried, so no request goes out on a connection the server has closed or
one past the keep-alive limit. What it leaves (an idle connection beyond the keep-alive count,
which the limits of ``served.connect`` make at most two) is closed with the pool. The limits,
TLS, proxies and exceptions stay httpx's own.
"""

from __future__ import annotations

from typing import Any

import httpcore
import httpx


class LeanConnectionPool(httpcore.AsyncConnectionPool):
    """httpcore's pool, asking a connection whether it expired only when it would take a
    request (it holds no state of its own: see ``make_lean``)."""

    def _assign_requests_to_connections(self) -> list[Any]:
        queued = [r for r in self._requests if r.is_queued()]
        if not queued:
            return []  # a response closed and nobody waits: nothing to assign
        closing: list[Any] = []
        connections = self._connections
        for pool_request in queued:
            origin = pool_request.request.url.origin
            chosen = None
            for connection in list(connections):
                if connection.is_closed():
                    connections.remove(connection)
                elif connection.can_handle_request(origin) and connection.is_available():
                    if not connection.has_expired():
                        chosen = connection
                        break
                    connections.remove(connection)
                    closing.append(connection)
            if chosen is None:
                if len(connections) >= self._max_connections:
                    spare = next((c for c in connections if c.is_idle()), None)
                    if spare is None:
                        continue  # it waits for a connection to be released
                    connections.remove(spare)
                    closing.append(spare)
                chosen = self.create_connection(origin)
                connections.append(chosen)
            pool_request.assign_to_connection(chosen)
        return closing


def make_lean(client: httpx.AsyncClient) -> httpx.AsyncClient:
    """``client``, the pool of its direct transport made the lean one; its proxies' pools (from
    the environment, as httpx reads them) and a transport of another httpx are left as they
    are. The lean pool adds no state to httpcore's, so the pool httpx built, with every
    setting the client gave it, becomes one."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    if type(pool) is httpcore.AsyncConnectionPool:
        pool.__class__ = LeanConnectionPool
    return client

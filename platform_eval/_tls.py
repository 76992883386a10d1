"""One TLS context for every connection pool the process opens.

httpx builds a context for each client, reading the whole CA bundle each time (50 ms on this
project's CI machine): a Client, its async twin and the token refresher each paid it, on every
command. The context is built once, by httpx's own rules (``SSL_CERT_FILE``, ``SSL_CERT_DIR``),
and again only when those change. A context is safe to share between threads and pools.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpx


def default_context() -> ssl.SSLContext:
    """The context httpx would build for ``verify=True`` now."""
    return _context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # The arguments are the cache's key: httpx reads the same variables itself.
    del cert_file, cert_dir
    return httpx.create_ssl_context()

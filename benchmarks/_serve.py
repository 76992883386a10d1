"""Processes of their own: the emulator, so that what a benchmark measures is the client's, and
each contender, so that its memory and imports are its own."""

from __future__ import annotations

import multiprocessing
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def _serve(port_queue: Any, db: str, drop_index: bool) -> None:
    from platform_eval.emulator import Emulator

    emulator = Emulator(db=db)
    if drop_index:  # the store creates it at start: take it away again
        emulator.store._db.execute("DROP INDEX IF EXISTS resources_listing")
    emulator.start()
    port_queue.put(emulator.port)
    while True:
        time.sleep(3600)


@contextmanager
def emulator_process(db: str | None = None, *, drop_index: bool = False) -> Iterator[str]:
    """The URL of an emulator serving ``db`` (a fresh file by default) from another process."""
    path = db or str(Path(tempfile.mkdtemp(prefix="bench-emulator-")) / "emulator.sqlite")
    queue: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(queue, path, drop_index), daemon=True)
    server.start()
    try:
        yield f"http://127.0.0.1:{queue.get(timeout=60)}"
    finally:
        server.terminate()
        server.join(timeout=10)


def in_child(target: Callable[..., None], *args: Any) -> Any:
    """What ``target(*args, queue)`` puts on the queue, run in a fresh process."""
    queue: Any = multiprocessing.Queue()
    process = multiprocessing.Process(target=target, args=(*args, queue))
    process.start()
    result = queue.get(timeout=3600)
    process.join()
    return result


def peak_rss_mib() -> float:
    """This process's peak resident memory so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

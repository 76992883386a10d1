"""Processes of their own: the emulator, so that what a benchmark measures is the client's, and
each contender, so that its memory and imports are its own; and the official client pointed at
the emulator."""

from __future__ import annotations

import multiprocessing
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
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


def official_client(url: str, project: str) -> Any:
    """The official SDK's ``vertexai.Client`` pointed at the emulator at ``url``."""
    import warnings

    import vertexai
    from google.oauth2.credentials import Credentials

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return vertexai.Client(
            project=project,
            location="us-central1",
            credentials=Credentials(token="bench"),
            http_options={"base_url": url},
        )


def peak_rss_mib() -> float:
    """This process's peak resident memory so far (since ``reset_peak_rss``), in MiB."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return int(status.split("VmHWM:")[1].split()[0]) / 1024


def reset_peak_rss() -> float:
    """Makes this process's peak resident memory its current one, and returns it in MiB.

    A contender's growth is measured from here: its imports' peak (higher than a pull of
    thousands of items), or the memory a forked child was handed, would otherwise hide what
    its work takes. Linux only (``/proc/self/clear_refs``); elsewhere the peak so far stands.
    """
    with suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")
    return peak_rss_mib()

"""How much one request or connection may ask of the emulator: every bound in one place.

Each has a default no real client comes near and is changed by an ``Emulator(...)`` argument or
an ``emulator start`` option. The defaults were measured against attacks: a 32 MB body of
``[{},{},...]`` took 1.2 GB and held the server for 13 s before values were counted, and some
21,000 idle connections exhausted the file descriptors before connections were capped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .. import _json_limits


@dataclass(frozen=True)
class Limits:
    #: Bytes of one request body (an upload's media included).
    body_bytes: int = 32 * 2**20
    #: Values one JSON body may hold (objects, arrays and their members). Parsed JSON takes
    #: about 150 bytes a value; a thousand-turn conversation holds some 50,000.
    json_values: int = 1_000_000
    #: Nesting of a JSON body; the service's protobuf parser stops at 100 as well.
    json_depth: int = field(default_factory=_json_limits.max_depth)
    #: A connection that sends no request within this many seconds, or whose request head is
    #: not whole that long after its first byte, is closed.
    first_request_seconds: float = 10.0
    #: Connections open at once; beyond, new ones are closed at once.
    connections: int = 1000
    #: Bytes of OTLP exports kept for ``GET /_emulator/otlp`` (the JSON kept); beyond, exports
    #: are refused until the kept ones are read and cleared. Ten 40 MB exports made a 429 MB
    #: answer and a 1.4 GB server.
    telemetry_bytes: int = 64 * 2**20

    def __post_init__(self) -> None:
        for name in ("body_bytes", "json_values", "connections", "telemetry_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")
        depth = self.json_depth
        if (
            isinstance(depth, bool)
            or not isinstance(depth, int)
            or not 1 <= depth <= _json_limits.DEEPEST_ALLOWED
        ):
            raise ValueError(
                f"json_depth must be a whole number from 1 to {_json_limits.DEEPEST_ALLOWED}, "
                f"got {depth!r}"
            )
        seconds = self.first_request_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ValueError(f"first_request_seconds must be a number, got {seconds!r}")
        if not 0 < seconds < math.inf:
            raise ValueError(f"first_request_seconds must be positive, got {seconds!r}")

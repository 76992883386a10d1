"""``emulator start``: serve the emulator until interrupted."""

from __future__ import annotations

import argparse
import os
import sys

from .._config import EMULATOR_TOKEN_ENV
from .._env import bytes_in
from ._common import EXIT_OK, EXIT_USAGE, error
from ._target import judge_settings


def emulator_start(args: argparse.Namespace) -> int:
    try:
        from ..emulator import Emulator
        from ..emulator.access import exposure_warning
    except ImportError as exc:
        error(f"{exc} (install the emulator: pip install 'platform-eval[emulator]')")
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        error("--port must be between 0 and 65535")
        return EXIT_USAGE
    # The environment rather than the flag keeps the token out of the process list.
    token = args.auth_token or os.environ.get(EMULATOR_TOKEN_ENV, "").strip() or None
    try:
        emulator = Emulator(
            host=args.host,
            port=args.port,
            db=args.db,
            log_level=args.log_level,
            max_body_bytes=bytes_in(args.max_body_mb),
            max_json_values=args.max_json_values,
            max_json_depth=args.max_json_depth,
            first_request_seconds=args.first_request_seconds,
            max_connections=args.max_connections,
            max_telemetry_bytes=bytes_in(args.max_telemetry_mb) if args.max_telemetry_mb else None,
            auth_token=token,
            judges=judge_settings(args, db=args.db).judges(),
        )
    except ValueError as exc:
        # PLATFORM_EVAL_MAX_JSON_DEPTH, when it is not a depth.
        error(str(exc))
        return EXIT_USAGE
    warning = exposure_warning(args.host, token)
    if warning:
        print(warning, file=sys.stderr)

    def listening(where: str) -> None:
        # Said once bound: with --port 0 the port is the one the system chose.
        print(f"platform-eval emulator on http://{where} (database: {args.db or 'in memory'})")
        print(f"  export PLATFORM_EVAL_EMULATOR_HOST={where}")
        if token:
            print(f"  export {EMULATOR_TOKEN_ENV}=<the token>  (every request must carry it)")
        sys.stdout.flush()

    try:
        emulator.serve_forever(listening)
    except OSError as exc:
        error(f"cannot serve on {emulator.host_port}: {exc.strerror or exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    return EXIT_OK

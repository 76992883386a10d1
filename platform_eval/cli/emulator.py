"""``emulator start``: serve the emulator until interrupted."""

from __future__ import annotations

import argparse
import sys

from ._common import EXIT_OK, EXIT_USAGE, error


def emulator_start(args: argparse.Namespace) -> int:
    try:
        from ..emulator import Emulator
    except ImportError as exc:
        error(f"{exc} (install the emulator: pip install 'platform-eval[emulator]')")
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        error("--port must be between 0 and 65535")
        return EXIT_USAGE
    emulator = Emulator(host=args.host, port=args.port, db=args.db, log_level=args.log_level)
    where = f"{args.host}:{args.port}"
    print(f"platform-eval emulator on http://{where} (database: {args.db or 'in memory'})")
    print(f"  export PLATFORM_EVAL_EMULATOR_HOST={where}")
    sys.stdout.flush()
    try:
        emulator.serve_forever()
    except OSError as exc:
        error(f"cannot serve on {where}: {exc.strerror or exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    return EXIT_OK

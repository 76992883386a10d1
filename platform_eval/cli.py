"""The ``platform-eval`` command.

Exit codes: 0 success, 1 a failed evaluation or threshold, 2 a usage or input error. Errors are
printed as one clear line, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._version import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="platform-eval", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"platform-eval {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    emulator = commands.add_parser("emulator", help="run the local emulator")
    emulator_commands = emulator.add_subparsers(
        dest="emulator_command", metavar="ACTION", parser_class=_Parser
    )
    start = emulator_commands.add_parser("start", help="serve the emulator until interrupted")
    start.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    start.add_argument("--port", type=int, default=8765, help="port to bind (default 8765)")
    start.add_argument(
        "--db", default=None, help="SQLite file to keep data in (default: in memory)"
    )
    start.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return parser


def _emulator_start(args: argparse.Namespace) -> int:
    try:
        from .emulator import Emulator
    except ImportError as exc:
        print(f"platform-eval: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        print("platform-eval: error: --port must be between 0 and 65535", file=sys.stderr)
        return EXIT_USAGE
    emulator = Emulator(host=args.host, port=args.port, db=args.db, log_level=args.log_level)
    where = f"{args.host}:{args.port}"
    print(f"platform-eval emulator on http://{where} (database: {args.db or 'in memory'})")
    print(f"  export PLATFORM_EVAL_EMULATOR_HOST={where}")
    try:
        emulator.serve_forever()
    except OSError as exc:
        print(
            f"platform-eval: error: cannot serve on {where}: {exc.strerror or exc}", file=sys.stderr
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "emulator" and args.emulator_command == "start":
        return _emulator_start(args)
    parser.print_help(sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``platform-eval`` command: eval sets and traces in, scores, verdicts and a CI verdict out.

Exit codes: 0 success, 1 a failed evaluation or threshold, 2 a usage or input error. Errors are
one readable line; tracebacks only with ``--debug``.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Sequence

from google.api_core import exceptions as core
from google.auth.exceptions import GoogleAuthError

from ..agents import AgentLoadError
from ..agents.remote import ServedAgentError
from ..errors import APIConnectionError, ConfigurationError, PlatformEvalError
from ..formats import FormatError
from ..traces.matching import AmbiguousPairingError
from ._api_errors import api_error_text
from ._arguments import parser as _parser
from ._common import EXIT_FAILED, EXIT_USAGE, UsageError, error
from ._target import TargetOptions, judge_settings, open_target
from ._traces import wants_emulator


def program() -> int:
    """The ``platform-eval`` program: ``main()``, and an exit that is not slower than the work.

    At exit the interpreter walks every object it still holds, looking for cycles to free. After
    an agent run that is a few hundred thousand objects and most of a second (0.70 s measured on
    200 cases), spent on memory the system takes back anyway. ``gc.freeze()`` leaves them out of
    that walk. Only the program does this: ``main()``, called in a long-lived process (a test
    run), leaves the collector as it is.
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()
    return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    earlier = list(logging.getLogger().handlers)  # a host's (a test run's), left as they are
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.ERROR if args.quiet else logging.WARNING,
        format="platform-eval: %(levelname)s: %(message)s",
    )
    if not args.debug:
        for handler in logging.getLogger().handlers:
            if handler not in earlier:
                handler.addFilter(_OncePerMessage())
                handler.setFormatter(_WithoutTraceback(handler.formatter))
        # google-adk's evaluators warn of every judge answer they cannot read and every judge
        # call that failed, a traceback each: the results say the same once per case, as
        # NOT_EVALUATED with the reason.
        logging.getLogger("google_adk.google.adk.evaluation").setLevel(logging.ERROR)
        # google-adk says its evaluators and simulators are experimental each time a run
        # builds one: notices for ADK's developers, which break the progress line.
        warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]", category=UserWarning)
    from .curate import where_run

    try:
        # convert-traces reads local files, and the emulator only for ``emulator:``; curate
        # reads a run's results for ``--where RUN=passed``.
        if (
            getattr(args, "needs_target", False)
            or wants_emulator(getattr(args, "traces", None))
            or where_run(args)
        ):
            options = TargetOptions(
                args.project, args.location, args.endpoint, args.quiet, judge_settings(args)
            )
            with open_target(options) as target:
                return int(args.handler(args, target))
        return int(args.handler(args))
    except KeyboardInterrupt:
        error("interrupted; run the same command again to finish (nothing done is lost)")
        return 130
    except BrokenPipeError:
        # The reader (`| head`) went away: nothing to tell it. Point stdout at devnull so the
        # interpreter's final flush does not complain either, and exit as Python does on EPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (
        UsageError,
        AgentLoadError,
        ServedAgentError,
        AmbiguousPairingError,
        FormatError,
        ConfigurationError,
        FileNotFoundError,
        IsADirectoryError,
    ) as exc:
        return _fail(args, exc, EXIT_USAGE)
    except (core.ClientError, core.MethodNotImplemented) as exc:
        # 501: the target cannot do what was asked (the emulator running inference).
        return _fail(args, exc, EXIT_USAGE)
    except (APIConnectionError, GoogleAuthError) as exc:
        # The target named or found cannot be reached or signed in to (refused, DNS, TLS, a
        # timeout, no credentials): the user's setting to fix.
        return _fail(args, exc, EXIT_USAGE)
    except (PlatformEvalError, core.GoogleAPIError, OSError) as exc:
        return _fail(args, exc, EXIT_FAILED)
    except Exception as exc:  # a bug of ours: still one line, the traceback with --debug
        if not args.debug:
            error(f"internal error: {type(exc).__name__}: {exc} (--debug shows the traceback)")
            return EXIT_FAILED
        return _fail(args, exc, EXIT_FAILED)


class _OncePerMessage(logging.Filter):
    """Lets each message through once: a library that warns per case or per judge answer
    (google-adk's unreadable auto-rater answer) says it once, not once a case."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, int, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, record.getMessage())
        if key in self._seen:
            return False
        self._seen.add(key)
        return True


class _WithoutTraceback(logging.Formatter):
    """A log line without the traceback a library attached (``--debug`` shows them)."""

    def __init__(self, like: logging.Formatter | None) -> None:
        super().__init__(like._fmt if like is not None else None)

    def format(self, record: logging.LogRecord) -> str:
        kept = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            return super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = kept


def _fail(args: argparse.Namespace, exc: BaseException, code: int) -> int:
    if args.debug:
        traceback.print_exc()
    text = api_error_text(exc) if isinstance(exc, core.GoogleAPICallError) else str(exc)
    if isinstance(exc, FormatError) and len(exc.problems) > 1:
        error(f"{len(exc.problems)} problems:")
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
    else:
        error(" ".join(text.split()) if "\n" not in text else text)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

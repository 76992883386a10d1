"""Records the weather agent of ``tests/adk_runs.py`` under whatever google-adk is installed.

The spans and session of ADK versions our test environment cannot install beside 2.x (the 1.x
span names ``invocation`` / ``agent_run [agent]``) are recorded once with this script in a
virtualenv of that version, and the tests read the files it writes::

    nox -s record_adk -- 1.10.0

or by hand::

    python -m venv /tmp/adk1 && /tmp/adk1/bin/pip install google-adk==1.10.0
    /tmp/adk1/bin/python tools/record_adk.py tests/recordings/adk-1.10.0

Writes ``spans.otlp.json`` (one export per sub-agent setting), ``session.json`` and
``version.txt`` into the folder given. A real Runner, a scripted model, no network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import google.adk
from adk_runs import record


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for sub_agent in (False, True):
        recording = record(schema=1, content=True, sub_agent=sub_agent)
        stem = "sub_agent" if sub_agent else "one_agent"
        (out / f"{stem}.spans.otlp.json").write_text(
            json.dumps(recording.otlp_json(), indent=1, ensure_ascii=False) + "\n"
        )
        (out / f"{stem}.session.json").write_text(
            json.dumps(recording.session, indent=1, ensure_ascii=False) + "\n"
        )
    (out / "version.txt").write_text(f"google-adk {google.adk.__version__}\n")


if __name__ == "__main__":
    main(sys.argv[1])

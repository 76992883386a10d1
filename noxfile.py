"""Developer sessions: `nox -s tests lint mypy`, `nox -s bench` for benchmarks."""

import nox

nox.options.sessions = ["lint", "mypy", "docs", "tests"]
nox.options.reuse_existing_virtualenvs = True


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs, env={"PLATFORM_EVAL_SLOW_TESTS": "1"})


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python="3.11")
def mypy(session: nox.Session) -> None:
    session.install("-e", ".[test]", "mypy>=1.11")
    session.run("mypy")


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
    """The documentation site, built as CI builds it (a warning fails it)."""
    session.install("-e", ".[docs]")
    session.run("mkdocs", "build", "--strict", env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session(python="3.11")
def samples(session: nox.Session) -> None:
    session.install("-e", ".[test]")
    session.run("pytest", "tests/test_samples.py", *session.posargs)


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """Every benchmark, side by side with the official client and google-adk; writes
    benchmarks/RESULTS.md (`nox -s bench -- --quick` for a smoke run)."""
    session.install("-e", ".[test]")
    session.run("python", "benchmarks/run_all.py", *session.posargs)


@nox.session(python="3.11")
def system(session: nox.Session) -> None:
    """Against the real service: needs GOOGLE_CLOUD_PROJECT and credentials."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "system", "tests/system", *session.posargs)


@nox.session(python="3.11")
def fuzz(session: nox.Session) -> None:
    """The loader and emulator fuzz tests with many more examples than CI runs."""
    session.install("-e", ".[test]")
    session.env["PLATFORM_EVAL_FUZZ_EXAMPLES"] = session.posargs[0] if session.posargs else "2000"
    session.run("pytest", "-q", "tests/formats/test_fuzz_loaders.py", "-p", "no:cacheprovider")


@nox.session(python="3.11")
def schemathesis(session: nox.Session) -> None:
    """Schemathesis against the emulator's OpenAPI description, many examples per operation."""
    session.install("-e", ".[test]")
    examples = session.posargs[0] if session.posargs else "500"
    session.env["PLATFORM_EVAL_SCHEMATHESIS_EXAMPLES"] = examples
    session.run("pytest", "-q", "tests/emulator/test_schemathesis.py", "-p", "no:cacheprovider")


@nox.session(python="3.11")
def chaos(session: nox.Session) -> None:
    """Uploads and runs under random faults and SIGKILLs of uploader and emulator."""
    session.install("-e", ".[test]")
    session.run("python", "tools/chaos.py", *(session.posargs or ["--rounds", "30"]))


@nox.session(python="3.11")
def soak(session: nox.Session) -> None:
    """Two emulators on one database, CLI runs three at a time, SIGKILLs, a full disk (root)."""
    session.install("-e", ".[test]")
    session.run("python", "tools/soak.py", *(session.posargs or ["--rounds", "12"]))


@nox.session(python="3.11")
def record_adk(session: nox.Session) -> None:
    """Records tests/recordings/adk-<version>/ with a real google-adk of that version:
    `nox -s record_adk -- 1.10.0` (versions the test environment cannot install beside 2.x)."""
    version = session.posargs[0] if session.posargs else "1.10.0"
    session.install(f"google-adk=={version}")
    session.run("python", "tools/record_adk.py", f"tests/recordings/adk-{version}")

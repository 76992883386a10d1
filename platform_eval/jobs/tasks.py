"""The high-level jobs: upload an eval set, upload traces as candidates, evaluate."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack, overload

from google.api_core import exceptions as core

from .._gc import collector_paused
from .._operations import MetricLike, to_metric
from .._sync import run_or_defer
from ..client import AsyncClient, Client
from ..errors import PlatformEvalError, WaitTimeoutError
from ..formats._problems import FormatError, Problem
from ..formats.convert import STATE_NOT_CARRIED, ConversionReport
from ..formats.dataset_items import DatasetCases, FileCase, file_case_id, file_case_item
from ..formats.load import repeated_ids
from ..formats.stream import (
    EvalCases,
    as_eval_set,
    cases_json_path,
)
from ..metrics import REGISTRY
from ..traces import (
    Conversation,
    MatchReport,
    load_traces,
    match_conversations,
)
from ..traces.matching import AmbiguousPairingError, case_session_id, split_run
from ..types import (
    CandidateResponse,
    EvaluationItem,
    EvaluationRun,
    EvaluationRunState,
    EvaluationSet,
    record_agent_usage,
    record_code_results,
    record_not_evaluated,
    record_thresholds,
)
from .code_metrics import code_results, keep_code_results, not_evaluated_results
from .manifest import Manifest, key_label
from .metric_check import MetricsRefusedError, refusals_async, rubric_types

if TYPE_CHECKING:
    pass

from .plan import (
    AgentRun,
    EvalSetSource,
    EvaluateOptions,
    EvaluationPlan,
    Recorded,
    RunOptions,
    build_plan,
    read_cases,
)
from .upload import (
    DEFAULT_CONCURRENCY,
    Failure,
    PendingItem,
    ProgressCallback,
    UploadResult,
    candidate_name,
    default_manifest_path,
    import_destination_for,
    set_identity,
    upload_items_async,
)
from .waiting import time_left, waiting_at_most

_logger = logging.getLogger("platform_eval.jobs")
AnyClient = Client | AsyncClient
#: Each eval case's candidate responses, by eval id.
Candidates = dict[str, list[CandidateResponse]]
#: What recordings hold of their candidates beside AgentData, kept in the item's metadata
#: (``Conversation.records``): eval id -> metadata key -> candidate -> what is kept.
CandidateRecords = dict[str, dict[str, dict[str, Any]]]


#: Part of every item's content hash: bump it when conversion changes what an item holds.
CONVERSION_VERSION = "1"


def _target(client: AnyClient) -> str:
    # Not the address: an embedded emulator listens on a new port each time it starts.
    return client.target_identity


def _open_manifest(
    client: AnyClient, source: str, set_id: str, manifest: str | Path | None
) -> Manifest:
    path = Path(manifest) if manifest else default_manifest_path(_target(client), set_id)
    return Manifest(path, parent=client.parent, source=source)


@dataclass
class UploadReport:
    """What an upload job did, filled in for callers who pass one (``report=UploadReport()``)."""

    items: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    resumed: int = 0
    removed: int = 0
    notes: list[str] = field(default_factory=list)
    conversion: ConversionReport = field(default_factory=ConversionReport)
    matches: MatchReport | None = None
    #: Each uploaded item -> the eval case it holds.
    case_ids: dict[str, str] = field(default_factory=dict)

    def fill(self, result: UploadResult, conversion: ConversionReport) -> None:
        self.items, self.failures = result.items, result.failures
        self.case_ids = {name: _case_of_key(key) for name, key in result.keys.items()}
        self.resumed, self.notes, self.conversion = result.resumed, result.notes, conversion
        self.removed = result.removed

    @property
    def uploaded(self) -> int:
        """Items created by this upload (the others were on the target already, unchanged)."""
        return len(self.items) - self.resumed

    def summary(self) -> str:
        lines = [self.headline()]
        lines += [f"failed: {f.key}: {f.reason}" for f in self.failures]
        lines += self.notes
        if self.matches is not None:
            lines.append(self.matches.summary())
        # What was not carried is logged as a warning as it is met (``conversion`` has it).
        return "\n".join(lines)

    def headline(self) -> str:
        """What happened, in words that need no arithmetic: "3 items uploaded", "all 3 items
        were already there: nothing uploaded", "1 item uploaded, 2 already there"."""
        total, new = len(self.items), self.uploaded
        if total == 0:
            line = "no items to upload"
        elif new == total:
            line = f"{_count(new, 'item')} uploaded"
        elif new == 0:
            already = "the item was" if total == 1 else f"all {total} items were"
            line = f"{already} already there: nothing uploaded"
        else:
            line = f"{_count(new, 'item')} uploaded, {self.resumed} already there"
        if self.removed:
            line += (
                f"; {_count(self.removed, 'item')} of changed or removed cases taken out of the "
                "set (kept on the target for earlier runs' results)"
            )
        return line


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


class UploadIncompleteError(PlatformEvalError):
    """Some items could not be created; the others are uploaded and a re-run resumes."""

    def __init__(self, report: UploadReport) -> None:
        self.report = report
        shown = "; ".join(f"{f.key}: {f.reason}" for f in report.failures[:5])
        more = f" (and {len(report.failures) - 5} more)" if len(report.failures) > 5 else ""
        super().__init__(
            f"{len(report.failures)} items failed, {len(report.items)} uploaded; the set was not "
            f"created (re-run to retry, or pass allow_partial=True): {shown}{more}"
        )


#: Failed items an upload names one by one; the rest are counted.
FAILURES_SHOWN = 5


def _finish_upload(
    result: UploadResult,
    conversion: ConversionReport,
    report: UploadReport | None,
    matches: MatchReport | None = None,
) -> EvaluationSet:
    out = report if report is not None else UploadReport()
    out.fill(result, conversion)
    out.matches = matches
    for eval_id, whats in conversion.not_carried.items():
        for what in whats:
            _logger.warning("eval case %s: not carried: %s", eval_id, what)
    if matches is not None and (matches.unmatched_cases or matches.unmatched_conversations):
        _logger.warning("%s", matches.summary())
    if result.evaluation_set is None:
        raise UploadIncompleteError(out)  # which says what failed: not said twice
    # Kept (allow_partial): the first few, then how many more, not a line per item.
    for failure in result.failures[:FAILURES_SHOWN]:
        _logger.warning("item %s failed: %s", failure.key, failure.reason)
    if len(result.failures) > FAILURES_SHOWN:
        _logger.warning("and %d more items failed", len(result.failures) - FAILURES_SHOWN)
    return result.evaluation_set


def _pending_cases(
    cases: EvalCases,
    report: ConversionReport,
    candidates: Mapping[str, list[CandidateResponse]] | None,
    records: CandidateRecords | None = None,
) -> list[PendingItem]:
    """(key, builder) of each case to upload. Every case is read once here for its key, and a
    bad one is reported with all the others before anything is sent. The builder keeps the case
    read here when the cases fit in memory; otherwise (an eval set of hundreds of megabytes) it
    reads the case again, so that no more than a few are held at once."""
    pending: list[PendingItem] = []
    problems: list[Problem] = []
    ids: list[str | None] = []
    keep = cases.keeps_parsed_cases
    # Reading builds thousands of objects that all stay until the upload: with the collector
    # running, its walks over them took a third of the reading (3,000 cases, bench_upload.py).
    with collector_paused():
        for index in range(len(cases)):
            try:
                file_case = cases.file_case(index)
            except FormatError as error:
                problems += error.problems
                ids.append(None)
                continue
            eval_id = file_case_id(file_case)
            ids.append(eval_id)
            if candidates is not None and eval_id not in candidates:
                continue
            case_records = (records or {}).get(eval_id)
            key = _case_key(file_case, candidates, case_records)
            source = file_case if keep else functools.partial(cases.file_case, index)
            build = functools.partial(
                _build, source, cases.eval_set_id, report, candidates, case_records
            )
            pending.append((key, build))
    # One id, two cases: their results could not be told apart.
    field = "eval_case_id" if isinstance(cases, DatasetCases) else "eval_id"
    problems += repeated_ids(ids, cases.path or cases.eval_set_id, cases_json_path(cases), field)
    if problems:
        raise FormatError(problems)
    return pending


def _build(
    source: FileCase | Callable[[], FileCase],
    eval_set_id: str,
    report: ConversionReport,
    candidates: Mapping[str, list[CandidateResponse]] | None,
    records: Mapping[str, Any] | None = None,
) -> EvaluationItem:
    case = source() if callable(source) else source
    item, case_report = file_case_item(case, eval_set_id)
    report.cases.append(case_report)
    if candidates is not None and item.evaluation_request is not None:
        request = item.evaluation_request.model_copy(
            update={"candidate_responses": candidates[file_case_id(case)]}
        )
        item = item.model_copy(update={"evaluation_request": request})
    if records:
        # No AgentData field holds them: the item's metadata does, for the metrics reading
        # them (ADK's judged criteria the grounding, final_session_state_match the state).
        metadata = {**(item.metadata or {}), **{k: dict(v) for k, v in records.items()}}
        item = item.model_copy(update={"metadata": metadata})
    return item


def _case_key(
    eval_case: FileCase,
    candidates: Mapping[str, list[CandidateResponse]] | None,
    records: Mapping[str, Any] | None = None,
) -> str:
    """The key a case's item is uploaded under: an edited case, or the same case with other
    traces, is another item."""
    return f"{file_case_id(eval_case)}#{_fingerprint(eval_case, candidates, records)}"


def _case_of_key(key: str) -> str:
    """The eval case id of a ``_case_key`` (the fingerprint holds no ``#``)."""
    return key.rsplit("#", 1)[0]


def _fingerprint(
    eval_case: FileCase,
    candidates: Mapping[str, list[CandidateResponse]] | None,
    records: Mapping[str, Any] | None = None,
) -> str:
    digest = hashlib.sha256(CONVERSION_VERSION.encode())
    case = eval_case.model_dump(mode="json", exclude_none=True)
    digest.update(json.dumps(case, sort_keys=True, ensure_ascii=False).encode())
    for candidate in (candidates or {}).get(file_case_id(eval_case), []):
        digest.update(json.dumps(candidate.to_wire(), sort_keys=True).encode())
    if records:
        digest.update(json.dumps(records, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True, kw_only=True)
class _Upload:
    """One upload job: which cases, with which candidates, into which set."""

    cases: EvalCases
    source: str
    manifest: str | Path | None
    display_name: str
    concurrency: int
    on_progress: ProgressCallback | None
    allow_partial: bool
    report: UploadReport | None
    set_key: str = "eval-set"
    candidates: Mapping[str, list[CandidateResponse]] | None = None
    #: What the recordings hold of each candidate beside its AgentData (``CandidateRecords``).
    records: CandidateRecords | None = None
    matches: MatchReport | None = None
    bulk_import: bool | str = True
    #: The candidates come from agent runs that started from each case's session state.
    state_used: bool = False

    @property
    def set_id(self) -> str:
        # The eval set's id, not the file's path: the same set from any folder is one set.
        return set_identity(f"{self.cases.eval_set_id}|{self.set_key}")

    def open_manifest(self, client: AnyClient) -> Manifest:
        return _open_manifest(client, self.source, self.set_id, self.manifest)

    async def __call__(
        self, client: AsyncClient, manifest: Manifest | None = None
    ) -> EvaluationSet:
        if len(self.cases) == 0:
            # Said here, not by the target's 400: a set must hold at least one item.
            raise FormatError(
                [Problem(self.source, "$.eval_cases", "has no cases: there is nothing to upload")]
            )
        conversion = ConversionReport()
        result = await upload_items_async(
            client,
            # Read while the target is asked what it holds.
            functools.partial(
                _pending_cases, self.cases, conversion, self.candidates, self.records
            ),
            manifest=manifest or self.open_manifest(client),
            set_id=self.set_id,
            display_name=self.display_name,
            concurrency=self.concurrency,
            on_progress=self.on_progress,
            allow_partial=self.allow_partial,
            import_destination=import_destination_for(client, self.bulk_import),
        )
        if self.state_used:  # read as the items were made, so known only now
            for whats in conversion.not_carried.values():
                while STATE_NOT_CARRIED in whats:
                    whats.remove(STATE_NOT_CARRIED)
        return _finish_upload(result, conversion, self.report, self.matches)


@overload
def upload_eval_set(
    client: Client, source: EvalSetSource, **options: Unpack[UploadOptions]
) -> EvaluationSet: ...


@overload
def upload_eval_set(
    client: AsyncClient, source: EvalSetSource, **options: Unpack[UploadOptions]
) -> Coroutine[Any, Any, EvaluationSet]: ...


def upload_eval_set(
    client: AnyClient,
    source: EvalSetSource,
    *,
    manifest: str | Path | None = None,
    display_name: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
    report: UploadReport | None = None,
    bulk_import: bool | str = True,
) -> Any:
    """Uploads an ADK eval set (file or object) as REQUEST items grouped in an evaluation set.

    Returns the EvaluationSet (a coroutine of it with an AsyncClient). Resumable: the manifest
    (by default under ``.platform-eval/manifests/``) records every created item, and a re-run
    finishes the job with each item created exactly once. When items fail, the others stay
    uploaded and UploadIncompleteError lists each failure with its reason (``allow_partial=True``
    makes the set from what was uploaded instead). Pass ``report=UploadReport()`` for the detail.

    ``bulk_import``: a set the target holds nothing of goes up with ``evaluationSets:import``,
    megabytes per call, where the target allows it: on the emulator always, on the service when
    given the ``gs://`` prefix to write the items' payloads under. False: one create per item.
    """
    job = _eval_set_job(
        source,
        manifest=manifest,
        display_name=display_name,
        concurrency=concurrency,
        on_progress=on_progress,
        allow_partial=allow_partial,
        report=report,
        bulk_import=bulk_import,
    )
    return run_or_defer(client, job)


def _eval_set_job(
    source: EvalSetSource,
    *,
    manifest: str | Path | None = None,
    display_name: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
    report: UploadReport | None = None,
    bulk_import: bool | str = True,
) -> _Upload:
    cases, where = read_cases(source)
    return _Upload(
        cases=cases,
        source=where,
        manifest=manifest,
        display_name=display_name or cases.name or cases.eval_set_id,
        concurrency=concurrency,
        on_progress=on_progress,
        allow_partial=allow_partial,
        report=report,
        bulk_import=bulk_import,
    )


class NothingToEvaluateError(PlatformEvalError):
    """No trace matched an eval case: an empty evaluation set would evaluate nothing."""


def _shared_messages_problem(shared: Mapping[str, list[str]]) -> str:
    by_cases: dict[tuple[str, ...], list[str]] = {}
    for conversation_id, cases in shared.items():
        by_cases.setdefault(tuple(cases), []).append(conversation_id)
    groups = list(by_cases.items())
    shown = "; ".join(
        f"traces {', '.join(ids[:3])}{' ...' if len(ids) > 3 else ''} could be any of the cases "
        f"{', '.join(cases[:5])}{' ...' if len(cases) > 5 else ''}"
        for cases, ids in groups[:3]
    )
    more = f" (and {len(groups) - 3} more such groups)" if len(groups) > 3 else ""
    return (
        f"{len(shared)} traces start with a question several eval cases ask, and no id of theirs "
        f"names a case: {shown}{more}. Pair them with --mapping (a JSON file: trace id -> eval "
        "id), or record them with the eval case's id as the session id (run --agent does)"
    )


def _traces_job(
    eval_set_source: EvalSetSource,
    traces: Sequence[str | Path | Conversation],
    *,
    candidate: str = "agent",
    mapping: Mapping[str, str] | None = None,
    manifest: str | Path | None = None,
    display_name: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
    report: UploadReport | None = None,
    bulk_import: bool | str = True,
) -> _Upload:
    cases, where = read_cases(eval_set_source)
    eval_set = as_eval_set(cases)
    # Files are read as one recording: a session's traces, or spans and the log records with
    # their content, may be in different files.
    conversations = load_traces(traces)
    for conversation in conversations:
        # What a trace reader could not read is said per conversation, never dropped silently.
        for note in conversation.notes:
            _logger.warning("trace %s (%s): %s", conversation.id, conversation.source, note)
    matches = match_conversations(eval_set.eval_cases, conversations, mapping)
    if matches.shared_messages:
        raise AmbiguousPairingError(_shared_messages_problem(matches.shared_messages))
    if not matches.matches:
        raise NothingToEvaluateError(
            f"none of {len(conversations)} conversations matched an eval case of "
            f"{eval_set.eval_set_id}, so there is nothing to evaluate:\n{matches.summary()}"
        )
    candidates, records = _candidates(matches, candidate)
    return _Upload(
        cases=cases,
        source=where,
        manifest=manifest,
        display_name=display_name or f"{eval_set.name or eval_set.eval_set_id} ({candidate})",
        concurrency=concurrency,
        on_progress=on_progress,
        allow_partial=allow_partial,
        report=report,
        bulk_import=bulk_import,
        set_key=f"traces:{candidate}",
        candidates=candidates,
        records=records,
        matches=matches,
    )


def _candidates(matches: MatchReport, candidate: str) -> tuple[Candidates, CandidateRecords]:
    """Each case's candidates, and what their recordings hold beside AgentData."""
    grouped: dict[str, list[Conversation]] = {}
    for match in matches.matches:
        grouped.setdefault(match.eval_id, []).append(match.conversation)
    out: Candidates = {}
    records: CandidateRecords = {}
    for eval_id, conversations in grouped.items():
        count = len(conversations)
        runs = [_run_of(eval_id, c.session_id or c.id, i) for i, c in enumerate(conversations)]
        if len(set(runs)) < count:
            runs = list(range(1, count + 1))
        out[eval_id] = []
        for run, conversation in zip(runs, conversations, strict=True):
            name = candidate_name(candidate, run, count)
            out[eval_id].append(
                CandidateResponse(candidate=name, agent_data=conversation.agent_data)
            )
            for key, kept in conversation.records().items():
                records.setdefault(eval_id, {}).setdefault(key, {})[name] = kept
    return out, records


def _run_of(eval_id: str, conversation_id: str, index: int) -> int:
    """The run a session of ``run --agent`` was (its id says which), else its place in order:
    the saved runs of an agent are the candidates the agent run had."""
    base, run = split_run(conversation_id)
    return run if run is not None and base in (eval_id, case_session_id(eval_id)) else index + 1


@overload
def upload_traces(
    client: Client,
    eval_set_source: EvalSetSource,
    traces: Sequence[str | Path | Conversation],
    **options: Unpack[TraceUploadOptions],
) -> EvaluationSet: ...


@overload
def upload_traces(
    client: AsyncClient,
    eval_set_source: EvalSetSource,
    traces: Sequence[str | Path | Conversation],
    **options: Unpack[TraceUploadOptions],
) -> Coroutine[Any, Any, EvaluationSet]: ...


def upload_traces(
    client: AnyClient,
    eval_set_source: EvalSetSource,
    traces: Sequence[str | Path | Conversation],
    *,
    candidate: str = "agent",
    mapping: Mapping[str, str] | None = None,
    manifest: str | Path | None = None,
    display_name: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_progress: ProgressCallback | None = None,
    allow_partial: bool = False,
    report: UploadReport | None = None,
    bulk_import: bool | str = True,
) -> Any:
    """Uploads the eval cases that have traces, each with its traces as candidate responses.

    Returns the EvaluationSet of those items (a coroutine of it with an AsyncClient). Traces are
    matched to cases by ``mapping`` (conversation id -> eval id) or by the first user message;
    cases without a trace and traces without a case are logged and listed in
    ``report.matches``. Resumable and exactly-once like ``upload_eval_set``.
    """
    job = _traces_job(
        eval_set_source,
        traces,
        candidate=candidate,
        mapping=mapping,
        manifest=manifest,
        display_name=display_name,
        concurrency=concurrency,
        on_progress=on_progress,
        allow_partial=allow_partial,
        report=report,
        bulk_import=bulk_import,
    )
    return run_or_defer(client, job)


@dataclass
class Evaluation:
    #: None when every metric is a local code metric: nothing for the target to compute, so
    #: no run is started (the service needs one metric at least).
    run: EvaluationRun | None
    #: The run's RESULT items, then one per request item for the config's local code metrics
    #: (computed by this process, never uploaded: they have no name).
    results: list[EvaluationItem]
    evaluation_set: EvaluationSet
    upload: UploadReport
    thresholds: dict[str, float] = field(default_factory=dict)
    #: True when this call attached to a run an earlier, interrupted call had started.
    attached: bool = False
    #: What running the agent did, for ``evaluate(agent=...)``.
    agent_runs: Any = None


class UploadOptions(TypedDict, total=False):
    """The keyword options of ``upload_eval_set``."""

    manifest: str | Path | None
    display_name: str | None
    concurrency: int
    on_progress: ProgressCallback | None
    allow_partial: bool
    report: UploadReport | None
    bulk_import: bool | str


class TraceUploadOptions(UploadOptions, total=False):
    """The keyword options of ``upload_traces``."""

    candidate: str
    mapping: Mapping[str, str] | None


@overload
def evaluate(
    client: Client, eval_set_source: EvalSetSource, **options: Unpack[EvaluateOptions]
) -> Evaluation: ...


@overload
def evaluate(
    client: AsyncClient, eval_set_source: EvalSetSource, **options: Unpack[EvaluateOptions]
) -> Coroutine[Any, Any, Evaluation]: ...


def evaluate(
    client: AnyClient, eval_set_source: EvalSetSource, **options: Unpack[EvaluateOptions]
) -> Any:
    """Uploads (with traces as candidates when given), starts a run, waits, returns results.

    The options (``EvaluateOptions``) are read into an ``EvaluationPlan`` (``build_plan``), the
    one place they are checked; ``execute`` carries a plan out.

    ``traces`` (trace files, saved sessions, conversations) are the candidates; a file whose
    cases hold the agent's answers (an agents-cli trace file) is graded as it is.

    ``agent`` (an agent folder as ``adk eval`` takes it, ``module:attribute``, an
    ``agents.LoadedAgent``, or a served agent's URL) runs the agent on every case first, as
    ``adk eval`` does, ``num_runs`` times each (``agent_concurrency`` runs at a time, in
    ``agent_processes`` processes: ``auto`` takes one per 25 runs up to the cores there are),
    and evaluates the sessions it finished as the candidates (``agent``, or ``agent#1`` ...
    ``agent#N``). A case the agent failed on is NOT_EVALUATED with the error.
    ``save_sessions``/``save_traces`` keep the sessions (ADK's JSON) and spans (OTLP JSON) in
    those folders: ``traces=[folder]`` evaluates them again. An interrupted evaluation, run
    again, does not run the agent again on the cases it finished (``resume=False``: keep
    nothing to resume from, under ``.platform-eval/agent-runs/``). ``mock_tools="golden"``
    answers the agent's tool calls from each case's expected tool responses instead of running
    the tools (matched by name and arguments, by the trajectory criterion's ``args_match``
    rules when the config has them); ``real_tools`` run for real anyway; a call no golden
    response answers fails its case, or runs the tool with ``unmatched_tools="real"``
    (``agents.tool_mocks``).

    ``inference_configs`` (candidate name -> the model or agent the service runs) has the run
    produce responses itself; the emulator answers such a run 501 UNIMPLEMENTED.

    The thresholds (the config's, then ``thresholds`` over them) are recorded in the run's
    ``metadata``, so that reading the run's results later judges them by the same thresholds.

    With ``wait=False`` it returns once the run is started (``results`` empty, the run not
    done); ``on_run_progress`` is called with the run at every poll while waiting. ``timeout``
    bounds every wait on the target (the upload's and the run's).

    A metric the target cannot compute is refused (``MetricsRefusedError``) before the agent
    runs or anything is uploaded. A re-run after a timeout or an interruption attaches to the
    run it started (unless that run failed, was cancelled, or its results were already read),
    instead of starting a second one.
    """
    return execute(client, build_plan(eval_set_source, **options))


@overload
def execute(client: Client, plan: EvaluationPlan) -> Evaluation: ...


@overload
def execute(client: AsyncClient, plan: EvaluationPlan) -> Coroutine[Any, Any, Evaluation]: ...


def execute(client: AnyClient, plan: EvaluationPlan) -> Any:
    """Carries out an evaluation plan (``build_plan``) on the client's target."""
    report = UploadReport()
    run_options = plan.run
    candidates = plan.candidates
    upload: _Upload | None = None
    if isinstance(candidates, Recorded):
        upload = _traces_job(
            plan.cases,
            candidates.traces,
            candidate=plan.candidate,
            mapping=candidates.mapping,
            manifest=run_options.manifest,
            on_progress=run_options.on_progress,
            report=report,
            bulk_import=run_options.bulk_import,
        )
    elif candidates is None:
        upload = _eval_set_job(
            plan.cases,
            manifest=run_options.manifest,
            on_progress=run_options.on_progress,
            report=report,
            bulk_import=run_options.bulk_import,
        )
    metric_plan = plan.metrics
    chosen = list(metric_plan.metrics)
    types = _rubric_types_of(plan.cases, chosen)

    async def job(async_client: AsyncClient) -> Evaluation:
        nonlocal upload
        # Before the agent runs or anything is uploaded: a metric the target cannot compute
        # is refused here, as the command line refuses it, not NOT_EVALUATED case by case.
        refused = await refusals_async(async_client, chosen, types)
        if refused:
            raise MetricsRefusedError(refused)
        ran = None
        if isinstance(candidates, AgentRun):
            ran, upload = await _agent_upload(plan, candidates, report)
        timeout = run_options.timeout
        # --timeout bounds the waits on the target from here (and bounded the agent's calls):
        # an import that never finishes ends the upload in time, and the run's wait gets
        # what is left.
        with waiting_at_most(timeout):
            assert upload is not None
            journal = upload.open_manifest(async_client)
            evaluation_set = await upload(async_client, journal)
            thresholds = dict(metric_plan.thresholds)
            not_evaluated = ran.not_evaluated if ran else _unrecorded(report, plan.candidate)
            metadata = record_not_evaluated(record_thresholds(None, thresholds), not_evaluated)
            metadata = record_agent_usage(metadata, ran.usage if ran else {})
            code = metric_plan.code
            # The local code metrics score the uploaded cases before the run starts, so that
            # their results are kept with it: ``results RUN`` shows what this call returns.
            scored = (
                await code_results(async_client, evaluation_set, report.case_ids, code)
                if code
                else []
            )
            run: EvaluationRun | None = None
            attached = False
            if chosen:
                run, attached, scored = await _start_or_attach(
                    async_client,
                    journal,
                    evaluation_set,
                    chosen,
                    metadata,
                    run_options.inference_configs,
                    _CodeResults(scored, _results_destination(async_client, run_options)),
                )
            agent_runs = ran.report if ran else None
            if not run_options.wait and run is not None:
                return Evaluation(
                    run,
                    [],
                    evaluation_set,
                    report,
                    thresholds,
                    attached=attached,
                    agent_runs=agent_runs,
                )
            results: list[EvaluationItem] = []
            if run is not None:
                run = await _wait_for(async_client, run, run_options)
                results = await async_client.get_results(run) if run.evaluation_results else []
                if run.name:
                    journal.record_collected(run.name)
            if code:
                results += scored
                if run is None and ran is not None:
                    # No run records the cases the agent failed on: these items do.
                    results += not_evaluated_results(ran.not_evaluated, code)
            if ran is not None and ran.journal is not None and not ran.not_evaluated:
                # Every run evaluated: a next evaluation runs the agent afresh. With runs that
                # failed (a server that stopped answering), the finished ones are kept: run
                # again, the agent runs only what it did not finish.
                ran.journal.clear()
            return Evaluation(
                run,
                results,
                evaluation_set,
                report,
                thresholds,
                attached=attached,
                agent_runs=agent_runs,
            )

    return run_or_defer(client, job)


async def _wait_for(client: AsyncClient, run: EvaluationRun, options: RunOptions) -> EvaluationRun:
    timeout = options.timeout
    try:
        return await client.wait_for_run(
            run,
            timeout=time_left(timeout),
            poll_interval=options.poll_interval,
            # A local run's end is seen within a second, not the default 10 s later.
            max_poll_interval=min(10.0, options.poll_interval * 5),
            on_progress=options.on_run_progress,
        )
    except WaitTimeoutError as exc:
        if timeout is None:
            raise
        # The bound is the whole wait's, the upload's included: said as given.
        state = exc.run.state if exc.run is not None else "not done"
        raise WaitTimeoutError(
            f"run {run.name} still {state} when the {timeout:g} s given to wait ran out",
            run=exc.run,
        ) from None


def _rubric_types_of(cases: EvalCases, chosen: Sequence[MetricLike]) -> list[str | None] | None:
    """The types of the rubrics the cases carry, where a chosen metric reads rubrics (whether a
    judge is needed for them): read from cases in memory, or from a file small enough that
    reading it twice costs little; None (not known) otherwise."""
    reads_rubrics = False
    for metric in chosen:
        info = REGISTRY.get(str(to_metric(metric).metric or ""))
        reads_rubrics = reads_rubrics or (info is not None and "rubrics" in info.reads)
    if not reads_rubrics or not cases.keeps_parsed_cases:
        return None
    try:
        return rubric_types(as_eval_set(cases))
    except FormatError:
        return None  # the upload says what is wrong with it


def _unrecorded(report: UploadReport, candidate: str) -> dict[str, dict[str, str]]:
    """The eval cases no recorded conversation was paired with, each NOT_EVALUATED with why:
    a case left out of the evaluation is a case that did not pass, never one that is not
    counted."""
    matches = report.matches
    if matches is None:
        return {}
    why = (
        "no recorded conversation was paired with this case "
        "(by its id, its first message or --mapping)"
    )
    return {eval_id: {candidate: why} for eval_id in matches.unmatched_cases}


async def _agent_upload(
    plan: EvaluationPlan, agent_run: AgentRun, report: UploadReport
) -> tuple[Any, _Upload]:
    """Runs the agent, then the upload of the cases it finished with their sessions."""
    from ..agents.connection import run_deadline
    from .agent_job import failures_summary, run_for_candidates

    candidate = plan.candidate
    eval_set = as_eval_set(plan.cases)
    # The run's timeout bounds every call to the agent too: a server that keeps a turn open
    # (keep-alive comments, a task that never completes) ends its case by then, NOT_EVALUATED.
    with run_deadline(plan.run.timeout):
        ran = await run_for_candidates(eval_set, agent_run.options, candidate)
    if not ran.candidates:
        raise NothingToEvaluateError(
            f"the agent finished none of the {len(ran.report.runs)} runs of "
            f"{eval_set.eval_set_id}, so there is nothing to evaluate: "
            f"{failures_summary(ran.not_evaluated)}"
        )
    upload = _Upload(
        cases=plan.cases,
        source=plan.source,
        manifest=plan.run.manifest,
        display_name=f"{eval_set.name or eval_set.eval_set_id} ({candidate})",
        concurrency=DEFAULT_CONCURRENCY,
        on_progress=plan.run.on_progress,
        allow_partial=False,
        report=report,
        bulk_import=plan.run.bulk_import,
        set_key=f"agent:{candidate}",
        candidates=ran.candidates,
        records=ran.records,
        state_used=True,
    )
    return ran, upload


def _results_destination(client: AsyncClient, options: RunOptions) -> str | None:
    """Where the code metrics' payloads go: the ``gs://`` prefix given, else the emulator's
    own bucket (even when the items were created one by one)."""
    given = options.bulk_import
    return import_destination_for(client, given if isinstance(given, str) else True)


@dataclass(frozen=True)
class _CodeResults:
    """The local code metrics' results, and where their payloads can be kept (a ``gs://``
    prefix; None: nowhere, on the service without one)."""

    items: list[EvaluationItem]
    destination: str | None


async def _start_or_attach(
    client: AsyncClient,
    journal: Manifest,
    evaluation_set: EvaluationSet,
    chosen: Sequence[MetricLike],
    metadata: Any,
    inference_configs: Mapping[str, Any] | None = None,
    code: _CodeResults | None = None,
) -> tuple[EvaluationRun, bool, list[EvaluationItem]]:
    """The run this evaluation started before and did not finish reading, or a new one, with
    the code metrics' results kept beside it (as stored, named; as given where they could not
    be kept)."""
    scored = list(code.items) if code is not None else []
    what = {
        "set": evaluation_set.name,
        "items": evaluation_set.evaluation_items,
        "metrics": [to_metric(m).to_wire() for m in chosen],
    }
    if inference_configs:
        what["inference"] = json.dumps(inference_configs, sort_keys=True, default=str)
    key = "run:" + key_label(json.dumps(what, sort_keys=True))
    earlier = journal.runs.get(key)
    if earlier and earlier not in journal.collected:
        try:
            run = await client.get_run(earlier)
        except core.NotFound:
            run = None
        if run is not None and run.state not in _NOT_WORTH_ATTACHING:
            _logger.info("attaching to %s, started by an earlier attempt", earlier)
            return run, True, scored
    if scored and code is not None:
        kept = await keep_code_results(client, scored, evaluation_set, code.destination)
        if kept is not None:
            scored = kept.items
            metadata = record_code_results(metadata, kept.set_name)
    run = await client.create_run(
        evaluation_set=evaluation_set,
        metrics=chosen,
        metadata=metadata,
        inference_configs=inference_configs,
    )
    assert run.name is not None
    journal.record_run(key, run.name)
    return run, False, scored


_NOT_WORTH_ATTACHING = (EvaluationRunState.FAILED, EvaluationRunState.CANCELLED)

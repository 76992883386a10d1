"""Running an agent on eval cases as ``adk eval`` does, into ADK sessions.

Each case runs in a fresh in-memory session (the case's ``session_input`` gives its app name,
user id, id and initial state) through google-adk's ``Runner``; its user turns come from ADK's
user simulators, as ``adk eval`` picks them: the recorded user messages of a ``conversation``,
or the LLM-backed simulator for a ``conversation_scenario``, configured by the eval config's
``user_simulator_config``. What comes out is the finished session, as ADK exports it: the same
thing ``--traces`` reads from a saved session, so what is scored is what a saved session gives.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import itertools
import logging
import math
import os
import warnings
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._adaptive import AUTO, limit_for
from .._model_errors import failure_text, unusable_model
from ..errors import PlatformEvalError
from ..formats import adk
from ..traces.adk_session import AGENT_CONFIG_KEY
from ..traces.matching import case_session_id
from .connection import call_deadline, count_events, within
from .history import history_events
from .journal import AgentJournal
from .live import LiveConversation, LiveStream, Utterance, drain, next_from, silence
from .loading import LoadedAgent
from .model_probe import ModelProbe, probe_timeout, retry_plugin
from .model_quota import CURRENT_CASE, CaseQuota, quota_plugin
from .reports import AgentProgress, AgentProgressCallback, AgentRunReport, CaseRun
from .tool_mocks import ToolMocks, mock_plugin

if TYPE_CHECKING:
    from google.adk.agents.run_config import RunConfig
    from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
    from google.adk.evaluation.simulation.user_simulator_provider import UserSimulatorProvider

    from .spans import SpanRecorder

_logger = logging.getLogger("platform_eval.agents")

#: As ``adk eval``: four cases at a time.
#: Cases at once: adapted to the model's quota, from 4 (adk eval's fixed default) up to the cap.
DEFAULT_AGENT_CONCURRENCY: int | str = AUTO

#: ADK's defaults for a case without ``session_input``.
_DEFAULT_APP = "EvaluationGenerator"
DEFAULT_USER = "test_user_id"


def session_id_for(eval_id: str, run: int, num_runs: int) -> str:
    """The id a case's session gets unless the case pins one: the eval id (as a session can
    carry it: ``case_session_id``), so that a saved session is matched to its case by id
    (``#n`` for the n-th of repeated runs)."""
    named = case_session_id(eval_id)
    return named if num_runs == 1 else f"{named}#{run}"


def to_adk_case(case: adk.EvalCase) -> AdkEvalCase:
    """Our eval case as google-adk's own ``EvalCase``, which its user simulators read."""
    from google.adk.evaluation.eval_case import EvalCase

    data = case.model_dump(mode="json", exclude_none=True)
    known = set(EvalCase.model_fields)
    return EvalCase.model_validate({k: v for k, v in data.items() if k in known})


def simulator_provider(user_simulator_config: dict[str, Any] | None) -> UserSimulatorProvider:
    """ADK's user simulator provider, configured from ``user_simulator_config`` exactly as
    ``adk eval`` configures it from the same eval config."""
    from google.adk.evaluation.eval_config import EvalConfig
    from google.adk.evaluation.simulation.user_simulator_provider import UserSimulatorProvider

    config = None
    if user_simulator_config:
        config = EvalConfig.model_validate(
            {"criteria": {}, "user_simulator_config": user_simulator_config}
        ).user_simulator_config
    with adk_experimental():
        return UserSimulatorProvider(user_simulator_config=config)


@contextlib.contextmanager
def adk_experimental() -> Iterator[None]:
    """google-adk warns that its user simulators are experimental, once per case: adk eval
    says it, and a report of 200 cases need not say it 600 times."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]", category=UserWarning)
        yield


def _eval_plugins(probe: ModelProbe | None) -> list[Any]:
    """The plugin adk eval adds so that a model's passing outage does not fail a case, with
    short tries while ``probe`` has seen the model answer nothing (``model_probe``)."""
    plugin = retry_plugin(probe)
    return [plugin] if plugin is not None else []


@functools.cache
def _app_details_recorder_class() -> Any:
    """A plugin that keeps, per agent, the first model request it sends: what ADK's
    EvaluationGenerator reads (through its request interceptor) into the app details its judged
    criteria are given. Built once: a plugin class needs google-adk."""
    from google.adk.plugins.base_plugin import BasePlugin

    class AppDetailsRecorder(BasePlugin):
        def __init__(self) -> None:
            super().__init__(name="platform_eval_app_details")
            #: The request object itself, read when the run is over: what a later callback
            #: changes in it is what the model was sent, as ADK's interceptor reads it.
            self.requests: dict[str, Any] = {}
            #: The same per turn: (invocation id, agent) -> its first request in that turn.
            self.turn_requests: dict[tuple[str, str], Any] = {}

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            self.requests.setdefault(callback_context.agent_name, llm_request)
            turn = (callback_context.invocation_id, callback_context.agent_name)
            self.turn_requests.setdefault(turn, llm_request)

        def agents(self) -> dict[str, dict[str, Any]]:
            return {name: _agent_config(name, request) for name, request in self.requests.items()}

        def keep_in(self, session: dict[str, Any], *, one_setup: bool = False) -> None:
            """Writes what each agent was given in each turn into the session's events
            (``AGENT_CONFIG_KEY``), so that a saved session is judged as this run is.
            ``one_setup``: a live conversation, whose agents were set up once for every turn
            (its turns are invocations of their own only once ``live_session`` made them so)."""
            kept: set[tuple[str, str]] = set()
            for event in session.get("events") or []:
                turn = (event.get("invocationId"), event.get("author"))
                request = self.requests.get(turn[1]) if one_setup else self.turn_requests.get(turn)
                if request is None or turn in kept:
                    continue
                kept.add(turn)
                metadata = dict(event.get("customMetadata") or {})
                metadata[AGENT_CONFIG_KEY] = _agent_config(turn[1], request)
                event["customMetadata"] = metadata

    return AppDetailsRecorder


def _agent_config(name: str, llm_request: Any) -> dict[str, Any]:
    """An agent as ADK's AgentDetails holds it (the system instruction as sent, the tool
    declarations), in AgentConfig's wire form."""
    config = llm_request.config
    instruction = config.system_instruction if config is not None else None
    if instruction is not None and not isinstance(instruction, str):
        parts = getattr(instruction, "parts", None) or []
        instruction = "".join(getattr(part, "text", None) or "" for part in parts)
    tools = [
        tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        for tool in ((config.tools if config is not None else None) or [])
        if hasattr(tool, "model_dump")  # a Tool; a Python callable has no declaration here
    ]
    found: dict[str, Any] = {"agentId": name, "instruction": instruction or ""}
    if tools:
        found["tools"] = tools
    return found


def _runner(
    agent: LoadedAgent,
    app_name: str,
    session_service: Any,
    recorder: Any = None,
    probe: ModelProbe | None = None,
    mocks: ToolMocks | None = None,
    quota: bool = False,
) -> Any:
    from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
    from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
    from google.adk.runners import Runner

    extra = [recorder] if recorder is not None else []
    if mocks is not None:
        extra.append(mock_plugin(mocks))
    if quota:
        # After the retry options are set: it takes 429 and 503 out of them (model_quota).
        extra.append(quota_plugin(probe))
    services = {
        "session_service": session_service,
        "artifact_service": InMemoryArtifactService(),
        "memory_service": InMemoryMemoryService(),
    }
    if agent.app is not None:
        # The App's plugins, caching and resumability take part, as in adk eval.
        app = agent.app.model_copy(
            update={
                "plugins": list(agent.app.plugins) + _eval_plugins(probe) + extra,
                "root_agent": agent.root_agent,
            }
        )
        return Runner(app=app, app_name=app_name, **services)
    from google.adk.apps.app import App

    # An App holds the plugins (Runner's own plugins= is deprecated); built as Runner builds
    # one for a bare agent, without App's name rules, which a bare agent never had to meet.
    bare = App.model_construct(
        name=app_name, root_agent=agent.root_agent, plugins=_eval_plugins(probe) + extra
    )
    return Runner(app=bare, app_name=app_name, **services)


def _span_content_config() -> Any:
    """A run config that has ADK put message content on its spans (not on log records, which
    a saved trace file would not hold), or None where this ADK cannot be told per run."""
    try:
        from google.adk.agents.run_config import RunConfig
        from google.adk.telemetry.context import ContentCapturingMode, TelemetryConfig
    except ImportError:
        os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
        return None
    mode = ContentCapturingMode.SPAN_ONLY
    return RunConfig(telemetry=TelemetryConfig(capture_message_content=mode))


async def converse(
    simulator: Any,
    turn: Callable[[Any], Awaitable[list[Any]]],
    on_turn: Callable[[], None] | None = None,
) -> str:
    """A case's conversation, driven by its user simulator: each message it gives is sent by
    ``turn`` (which answers with the turn's events, the user's message first), until it stops;
    why it stopped. Wherever the agent runs, here or on a server."""
    from google.adk.evaluation.simulation.static_user_simulator import StaticUserSimulator
    from google.adk.evaluation.simulation.user_simulator import Status

    events: list[Any] = []
    # adk eval gives the simulator a deep copy of the conversation. The recorded conversation's
    # simulator reads none of it, and the copy was 7% of the CPU of a run of 200 cases.
    reads_events = not isinstance(simulator, StaticUserSimulator)
    while True:
        # The simulator sees the conversation as adk eval shows it: each turn's user message,
        # then the agent's events.
        seen = copy.deepcopy(events) if reads_events else list(events)
        following = await simulator.get_next_user_message(seen)
        if following.status != Status.SUCCESS:
            return str(following.status.value)
        events += await turn(following.user_message)
        if on_turn is not None:
            on_turn()


async def run_case(
    agent: LoadedAgent,
    case: AdkEvalCase,
    provider: UserSimulatorProvider,
    session_id: str,
    on_turn: Callable[[], None] | None = None,
    run_config: RunConfig | None = None,
    history: Sequence[adk.Invocation] = (),
    probe: ModelProbe | None = None,
    mocks: ToolMocks | None = None,
    quota: bool = False,
    audio: dict[int, bytes] | None = None,
) -> tuple[dict[str, Any], str, dict[str, dict[str, Any]]]:
    """Runs one ADK eval case; returns its finished session (ADK's JSON), why it ended, and
    what each agent was given (``CaseRun.agents``). ``history``: turns that already happened,
    put into the session before the case's own are asked. ``probe``: whether the model
    answered yet in this run (``model_probe``); ``mocks``: the case's golden tool answers
    (``tool_mocks``), None for the real tools. ``audio``: given in live mode (``live``), the
    case runs through ``Runner.run_live`` and each turn's audio goes into it."""
    from google.adk.events.event import Event
    from google.adk.sessions.in_memory_session_service import InMemorySessionService

    given = case.session_input
    app_name = given.app_name if given else _DEFAULT_APP
    user_id = given.user_id if given else DEFAULT_USER
    session_id = (given.session_id if given else None) or session_id
    service = InMemorySessionService()
    await service.create_session(
        app_name=app_name,
        user_id=user_id,
        state=dict(given.state) if given else {},
        session_id=session_id,
    )
    if history:
        session = await service.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        assert session is not None
        for event in history_events(history, agent.root_agent.name):
            await service.append_event(session, event)
    if agent.reset is not None:
        agent.reset()
    with adk_experimental():
        simulator = provider.provide(case)
    recorder = _app_details_recorder_class()()
    runner = _runner(agent, app_name, service, recorder, probe, mocks, quota)

    async def turn(message: Any) -> list[Any]:
        said: list[Any] = []
        seconds, cause = call_deadline(agent.turn_timeout or math.inf)
        async with within(seconds, f"the agent {agent.name}", cause):
            async for event in runner.run_async(
                user_id=user_id, session_id=session_id, new_message=message, run_config=run_config
            ):
                if not said:
                    said.append(
                        Event(content=message, author="user", invocation_id=event.invocation_id)
                    )
                said.append(event)
                count_events(len(said), f"the agent {agent.name}'s turn")
        return said

    live = RunnerLive(runner, user_id, session_id, run_config) if audio is not None else None
    try:
        speak = live.conversation.adk_turn if live is not None else turn
        ending = await converse(simulator, speak, on_turn)
    finally:
        if live is not None:
            await live.close()
        await runner.close()
    session = await service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
    assert session is not None
    dumped = session.model_dump(mode="json", by_alias=True, exclude_none=True)
    if live is not None and audio is not None:
        dumped = live.conversation.finished(dumped, audio)
    recorder.keep_in(dumped, one_setup=live is not None)
    return dumped, ending, recorder.agents()


class RunnerLive:
    """A case's live conversation through ``Runner.run_live`` (``live``), in this process: the
    run config ``adk api_server``'s ``/run_live`` gives (audio out, transcribed)."""

    def __init__(
        self, runner: Any, user_id: str, session_id: str, run_config: RunConfig | None
    ) -> None:
        from google.adk.agents.live_request_queue import LiveRequestQueue
        from google.adk.agents.run_config import RunConfig

        self.queue = LiveRequestQueue()
        config = (run_config or RunConfig()).model_copy(update={"response_modalities": ["AUDIO"]})
        self.events: asyncio.Queue[Any] = asyncio.Queue()
        stream = runner.run_live(
            user_id=user_id, session_id=session_id, live_request_queue=self.queue,
            run_config=config,
        )  # fmt: skip
        self._pump = asyncio.ensure_future(drain(stream, self.events))
        self.conversation = LiveConversation(_QueueStream(self))

    async def close(self) -> None:
        self.conversation.close()
        self.queue.close()
        self._pump.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._pump


class _QueueStream(LiveStream):
    def __init__(self, live: RunnerLive) -> None:
        self.live = live

    async def send(self, said: Utterance) -> None:
        from google.genai import types

        queue = self.live.queue
        if said.content is not None:
            queue.send_content(types.Content.model_validate(said.content))
        if said.audio:
            queue.send_realtime(types.Blob(data=said.audio, mime_type=said.audio_mime))
            queue.send_realtime(
                types.Blob(data=silence(said.audio_mime), mime_type=said.audio_mime)
            )

    async def next(self) -> dict[str, Any] | None:
        event = await next_from(self.live.events)
        if event is None:
            return None
        dumped: dict[str, Any] = event.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped


class AgentModelError(PlatformEvalError):
    """The agent's model cannot be reached or used (unknown, no access, no route, no
    credentials): the run stops on the first such failure rather than on every case."""


def _stops_the_run(exc: BaseException, probe: ModelProbe) -> bool:
    """A model no call can use, or one that failed every try before it ever answered (down,
    answering 5xx or silent from the start): the other cases would meet the same. A 400 is
    about one request (what a case asked), and stops only its case."""
    if unusable_model(exc):
        return True
    from google.genai.errors import ServerError

    return not probe.answered and isinstance(exc, ServerError | TimeoutError)


def _failure_text(exc: BaseException, probe: ModelProbe) -> str:
    """Why a case failed, in one line: the error, and what a bare one leaves unsaid."""
    if isinstance(exc, TimeoutError) and not probe.answered:
        return (
            f"TimeoutError: the model gave no answer within {probe_timeout():g} s "
            "(PLATFORM_EVAL_AGENT_PROBE_TIMEOUT, for calls before its first answer)"
        )
    return failure_text(exc)


def _outage_message(agent: LoadedAgent, error: str) -> str:
    model = getattr(agent.root_agent, "model", None)
    named = f" {model}" if isinstance(model, str) and model else ""
    return (
        f"the agent's model{named} cannot be used: {error}; the other cases were not run "
        "(check the model name, GOOGLE_API_KEY or Application Default Credentials, and "
        "GOOGLE_GEMINI_BASE_URL / GOOGLE_VERTEX_BASE_URL if set)"
    )


@dataclass(frozen=True)
class CaseSettings:
    """What every run of one evaluation's cases shares, in whichever process it runs."""

    num_runs: int = 1
    #: The cases at once adapt to the model's quota (``model_quota``'s plugin takes part).
    adaptive: bool = False
    user_simulator_config: dict[str, Any] | None = None
    #: Keep each run's OpenTelemetry spans (``--save-traces``).
    record_spans: bool = False
    #: Each case as one live (bidi) conversation: ``Runner.run_live``, audio out (``live``).
    live: bool = False


@dataclass
class CaseContext:
    """What running a case needs in this process: the agent loaded here, the user simulators,
    the model probe and, with ``--save-traces``, the span recorder."""

    agent: LoadedAgent
    provider: UserSimulatorProvider
    settings: CaseSettings = field(default_factory=CaseSettings)
    run_config: RunConfig | None = None
    recorder: SpanRecorder | None = None
    probe: ModelProbe = field(default_factory=ModelProbe)

    @classmethod
    def for_agent(cls, agent: LoadedAgent, settings: CaseSettings | None = None) -> CaseContext:
        settings = settings or CaseSettings()
        recorder = None
        if settings.record_spans:
            from .spans import SpanRecorder  # OpenTelemetry's SDK, which google-adk brings

            recorder = SpanRecorder.install()
        return cls(
            agent,
            simulator_provider(settings.user_simulator_config),
            settings,
            _span_content_config() if settings.record_spans else None,
            recorder,
        )


async def execute_case(
    context: CaseContext,
    case: adk.EvalCase,
    run: int,
    quota: CaseQuota,
    mocks: ToolMocks | None,
    on_turn: Callable[[], None],
) -> tuple[CaseRun, str | None]:
    """Runs one case once, here; returns its run and, when its failure is one every other
    case would meet (the model cannot be used), the message that stops the run."""
    result = CaseRun(case.eval_id, run)
    stops: str | None = None
    token = CURRENT_CASE.set(quota)
    recorder = context.recorder
    scope = recorder.scope(result.key) if recorder else contextlib.nullcontext()
    try:
        with scope:
            history = (case.conversation or [])[: case.history_turns]
            asked = (
                case.model_copy(update={"conversation": (case.conversation or [])[len(history) :]})
                if history
                else case
            )
            result.session, result.ending, result.agents = await run_case(
                context.agent,
                to_adk_case(asked),
                context.provider,
                session_id_for(case.eval_id, run, context.settings.num_runs),
                on_turn,
                context.run_config,
                history,
                context.probe,
                mocks,
                context.settings.adaptive,
                result.audio if context.settings.live else None,
            )
            why = context.agent.unanswered(result.session) if context.agent.unanswered else None
            if why is not None:
                # Scored, its empty answer would pass whatever expects little: not evaluated.
                result.session, result.error = None, why
    except Exception as exc:  # one case's failure must not stop the others
        result.error = _failure_text(exc, context.probe)
        if _stops_the_run(exc, context.probe):
            # ... but a model no call can reach stops them all, said once.
            stops = _outage_message(context.agent, result.error)
        # The reason is reported with the results; the traceback is for --debug.
        _logger.debug("%s: the agent failed", result.key, exc_info=True)
    finally:
        CURRENT_CASE.reset(token)
    if mocks is not None:
        result.tool_calls = list(mocks.log)
    if recorder is not None:
        result.spans = recorder.take(result.key)
    return result, stops


#: Runs one case once, somewhere (in this process, or a worker's): ``execute_case``'s shape.
CaseExecutor = Callable[
    [adk.EvalCase, int, CaseQuota, "ToolMocks | None", Callable[[], None]],
    Awaitable[tuple[CaseRun, "str | None"]],
]


async def schedule(
    execute: CaseExecutor,
    cases: Sequence[adk.EvalCase],
    num_runs: int,
    concurrency: int | str,
    max_concurrency: int,
    journal: AgentJournal | None,
    record_spans: bool,
    on_progress: AgentProgressCallback | None,
    tool_mocks: Callable[[adk.EvalCase], ToolMocks | None] | None,
) -> AgentRunReport:
    """Every run of every case through ``execute``, as many at once as the limit allows, the
    journal read before and written after each."""
    planned = [(case, run) for case in cases for run in range(1, num_runs + 1)]
    progress = AgentProgress(total=len(planned))
    adaptive = concurrency == AUTO
    limit = limit_for(concurrency, max_concurrency)

    def tell() -> None:
        if on_progress is not None:
            on_progress(progress)

    def turned() -> None:
        progress.turns += 1
        tell()

    async def one(case: adk.EvalCase, run: int) -> CaseRun:
        earlier = journal.finished(case, run, need_spans=record_spans) if journal else None
        if earlier is not None:
            progress.done += 1
            progress.resumed += 1
            tell()
            return earlier
        async with limit.slot() as place:
            quota = CaseQuota(place)
            if adaptive:
                progress.at_once = limit.limit
            mocks = tool_mocks(case) if tool_mocks is not None else None
            result, stops = await execute(case, run, quota, mocks, turned)
            if result.error is not None:
                progress.failed += 1
            if stops is not None and not outage:
                outage.append(stops)
            if result.error is None and journal is not None:
                journal.record(case, result)
            if result.error is None and not quota.refused:
                # A case whose model never said "over quota": the limit may rise.
                place.succeeded(latency=quota.slowest)
            progress.done += 1
            if adaptive:
                progress.at_once = limit.limit
            tell()
            return result

    tell()
    outage: list[str] = []
    # Cases start as places free, a window ahead of the limit, not every case at once: 10,000
    # cases waiting for 32 places would be 10,000 tasks held for the whole run.
    window = 2 * max(limit.cap, 1) + 16
    upcoming = iter(planned)
    tasks: list[asyncio.Future[CaseRun]] = []
    pending: set[asyncio.Future[CaseRun]] = set()
    try:
        while True:
            for case, run in itertools.islice(upcoming, max(window - len(pending), 0)):
                started = asyncio.ensure_future(one(case, run))
                tasks.append(started)
                pending.add(started)
            if not pending:
                break
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if outage:
                raise AgentModelError(outage[0])
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return AgentRunReport(runs=[task.result() for task in tasks], num_runs=num_runs)

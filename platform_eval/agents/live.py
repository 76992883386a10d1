"""An agent's conversation in live (bidi) mode, as ADK's ``/run_live`` holds it: one stream per
case, each user turn sent into it (text as content; audio as realtime input followed by a
second of silence, where the model's voice activity detection ends the user's turn), the agent
answering with audio and its transcript.

Wherever the agent runs (``Runner.run_live`` here, a served agent's ``/run_live`` WebSocket),
the conversation is the same: events arrive as ADK's JSON; a turn ends at the model's
``turnComplete`` that is not the end of a tool round trip (``TurnBoundary``), and a turn that
never ends within its time fails the case, never scored on half an answer. Per turn, the time
to the agent's first audio and to its last, and the audio itself, are kept (``LiveTurn``).

What a live session stores differs from a turn-based one: the whole conversation is one
invocation, and the agent's words are transcription events, not content. ``live_session``
turns it into the shape every reader takes: an invocation per user turn, each transcript a
text answer, the turn's timings on its last event (``LIVE_KEY``), so a saved session is scored
and timed as the run was.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
import time
import wave
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from .._env import positive_number
from .._large_reads import LargeRead
from ..errors import PlatformEvalError
from .connection import LIVE_AUDIO, count_events, over_cap

#: Where a turn's timings are kept: the customMetadata of the turn's last event.
LIVE_KEY = "platform_eval_live"

#: The longest one live turn may take (the model's speech and its tools), unless
#: ``PLATFORM_EVAL_LIVE_TURN_TIMEOUT`` says otherwise.
LIVE_TURN_TIMEOUT = 120.0

#: After a ``turnComplete`` that leaves a tool call unanswered: how long the answer may still
#: take (ADK can send a non-blocking tool's response after it; nothing else tells the two apart).
DEFERRED_ANSWER_TIMEOUT = 10.0

#: The silence after a user turn's audio: where voice activity detection ends the turn.
_SILENCE_SECONDS = 1.0

#: The Live API's input audio: 16-bit PCM, mono, at 16 kHz unless the MIME type says a rate.
_INPUT_RATE = 16000
_PCM_RATE = re.compile(r"rate=(\d+)")


class LiveTurnError(PlatformEvalError):
    """A live turn that did not end as a turn ends (no answer, or no end, in its time)."""


def turn_timeout() -> float:
    """``PLATFORM_EVAL_LIVE_TURN_TIMEOUT`` (ConfigurationError naming it when it is no positive
    number), else ``LIVE_TURN_TIMEOUT``."""
    return positive_number("PLATFORM_EVAL_LIVE_TURN_TIMEOUT", LIVE_TURN_TIMEOUT)


@dataclass
class LiveTurn:
    """One user turn of a live conversation, as it was timed: seconds from the user's turn
    (its text sent, or its speech ended) to the agent's first audio and to its last."""

    index: int
    sent_at: float
    first_audio: float | None = None
    last_audio: float | None = None
    ended_at: float | None = None
    #: The agent's audio in this turn, as it arrived (PCM of ``audio_mime``).
    audio: bytearray = field(default_factory=bytearray)
    audio_mime: str | None = None
    #: The ids of the events this turn streamed.
    event_ids: set[str] = field(default_factory=set)
    #: What the user said in it, as the model transcribed it (audio turns).
    heard: str = ""

    def timing(self) -> dict[str, Any]:
        """The turn's figures in the JSON kept with the session (``LIVE_KEY``)."""
        found: dict[str, Any] = {"turn": self.index}
        if self.first_audio is not None:
            found["firstAudioSeconds"] = round(self.first_audio - self.sent_at, 6)
        if self.last_audio is not None:
            found["lastAudioSeconds"] = round(self.last_audio - self.sent_at, 6)
        if self.ended_at is not None:
            found["turnSeconds"] = round(self.ended_at - self.sent_at, 6)
        seconds = audio_seconds(len(self.audio), self.audio_mime)
        if seconds is not None:
            found["audioSeconds"] = round(seconds, 6)
        return found

    def wav(self) -> bytes | None:
        """The turn's audio as a WAV file (16-bit mono PCM at its rate), None without audio."""
        if not self.audio or not (self.audio_mime or "").startswith("audio/pcm"):
            return None
        out = io.BytesIO()
        with wave.open(out, "wb") as file:
            file.setnchannels(1)
            file.setsampwidth(2)
            file.setframerate(_rate(self.audio_mime, 24000))
            file.writeframes(bytes(self.audio[: len(self.audio) // 2 * 2]))
        return out.getvalue()


def _rate(mime: str | None, default: int) -> int:
    found = _PCM_RATE.search(mime or "")
    return int(found.group(1)) if found else default


def audio_seconds(size: int, mime: str | None) -> float | None:
    """How long ``size`` bytes of 16-bit mono PCM play."""
    if not size or not (mime or "").startswith("audio/pcm"):
        return None
    return size / 2 / _rate(mime, 24000)


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    content = event.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts or [] if isinstance(p, dict)]


def _audio_parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p["inlineData"]
        for p in _parts(event)
        if isinstance(p.get("inlineData"), dict)
        and str(p["inlineData"].get("mimeType", "")).startswith("audio/")
    ]


class TurnBoundary:
    """Where a live turn ends. A ``turnComplete`` ends it, unless it closes a tool round trip
    (a call the agent answered: the model speaks again), or leaves a call unanswered (then the
    answer may still come: ``provisional``). A model that reports ``interactionStatus`` says
    it itself."""

    def __init__(self) -> None:
        self._call_open = False
        self._answered = False

    def feed(self, event: dict[str, Any]) -> str:
        """``continue``, ``provisional`` or ``end``: what ``event`` means for the turn."""
        parts = _parts(event)
        if any(p.get("functionCall") for p in parts):
            self._call_open, self._answered = True, False
        elif any(p.get("functionResponse") for p in parts):
            self._answered = self._call_open
        elif _says_something(event):
            self._call_open = self._answered = False
        if not event.get("turnComplete"):
            return "continue"
        status = str(event.get("interactionStatus") or "").upper()
        if status and status != "INTERACTION_STATUS_UNSPECIFIED":
            return "continue" if status == "IN_PROGRESS" else "end"
        if self._call_open and self._answered:
            self._call_open = self._answered = False
            return "continue"
        return "provisional" if self._call_open else "end"


def _says_something(event: dict[str, Any]) -> bool:
    said = event.get("outputTranscription")
    if isinstance(said, dict) and said.get("text"):
        return True
    return any(p.get("text") or p.get("inlineData") for p in _parts(event))


@dataclass(frozen=True)
class Utterance:
    """A user turn as the live stream takes it: its text and other parts as content, its audio
    as realtime input (16-bit PCM and its MIME type), or both."""

    content: dict[str, Any] | None
    audio: bytes = b""
    audio_mime: str = ""


def utterance(message: Any) -> Utterance:
    """A user message (google-genai ``Content``) split for the live stream; LiveTurnError for
    audio the Live API does not take (it takes 16-bit PCM; WAV files are read into it)."""
    dumped = message.model_dump(mode="json", by_alias=True, exclude_none=True)
    kept: list[dict[str, Any]] = []
    audio = b""
    mime = ""
    for part in dumped.get("parts") or []:
        blob = part.get("inlineData")
        if not (isinstance(blob, dict) and str(blob.get("mimeType", "")).startswith("audio/")):
            kept.append(part)
            continue
        pcm, mime = _pcm(base64.b64decode(blob.get("data") or ""), str(blob["mimeType"]))
        audio += pcm
    content = {"role": "user", "parts": kept} if kept else None
    return Utterance(content, audio, mime)


def _pcm(data: bytes, mime: str) -> tuple[bytes, str]:
    if mime.startswith("audio/pcm"):
        return data, mime if "rate=" in mime else f"audio/pcm;rate={_INPUT_RATE}"
    if mime in ("audio/wav", "audio/x-wav", "audio/wave"):
        try:
            with wave.open(io.BytesIO(data)) as file:
                if file.getsampwidth() != 2 or file.getnchannels() != 1:
                    raise LiveTurnError(
                        "a live turn's WAV audio must be 16-bit mono, not "
                        f"{file.getsampwidth() * 8}-bit with {file.getnchannels()} channels"
                    )
                return file.readframes(file.getnframes()), f"audio/pcm;rate={file.getframerate()}"
        except (wave.Error, EOFError) as exc:
            raise LiveTurnError(f"a live turn's audio/wav part is no WAV file ({exc})") from None
    raise LiveTurnError(
        f"a live turn's audio is sent as 16-bit PCM: {mime} cannot be; give the case's audio as "
        "audio/wav or audio/pcm;rate=16000"
    )


def silence(mime: str) -> bytes:
    """``_SILENCE_SECONDS`` of 16-bit PCM silence at ``mime``'s rate."""
    return b"\0" * (int(_rate(mime, _INPUT_RATE) * _SILENCE_SECONDS) * 2)


class LiveStream:
    """One live conversation's stream, wherever the agent runs: ``send`` a user turn, ``next``
    event (ADK's JSON; None once the stream has ended)."""

    async def send(self, said: Utterance) -> None:
        raise NotImplementedError

    async def next(self) -> dict[str, Any] | None:
        raise NotImplementedError


@dataclass
class LiveConversation:
    """The turns of one live conversation, each played on ``stream`` and timed."""

    stream: LiveStream
    timeout: float = field(default_factory=turn_timeout)
    turns: list[LiveTurn] = field(default_factory=list)
    clock: Callable[[], float] = time.monotonic
    #: Each user message as it was sent (ADK's JSON), in order.
    sent: list[dict[str, Any]] = field(default_factory=list)
    #: Held once the conversation's audio is large, until it ends (``close``): one such
    #: conversation at a time in memory, however many cases run at once (``_large_reads``).
    large: LargeRead = field(default_factory=LargeRead)

    def close(self) -> None:
        """The conversation ended: its place for large reads, if it held one, is given up."""
        self.large.release()

    async def adk_turn(self, message: Any) -> list[Any]:
        """``turn`` as a user simulator reads it (``running.converse``): google-adk's events,
        the user's message first, the agent's partial events left out."""
        from google.adk.events.event import Event

        answered = await self.turn(message)
        said = [Event(content=message, author="user")]
        return said + [Event.model_validate(e) for e in answered if not e.get("partial")]

    def finished(self, session: dict[str, Any], audio: dict[int, bytes]) -> dict[str, Any]:
        """The finished ``session`` in the turn-based shape (``live_session``); each turn's
        audio, as a WAV file, into ``audio``."""
        for turn in self.turns:
            wav = turn.wav()
            if wav is not None:
                audio[turn.index] = wav
        return live_session(session, self.turns, self.sent)

    async def turn(self, message: Any) -> list[dict[str, Any]]:
        """Sends one user message; the agent's events of the turn, once it ended."""
        said = utterance(message)
        self.sent.append(message.model_dump(mode="json", by_alias=True, exclude_none=True))
        await self.stream.send(said)
        turn = LiveTurn(len(self.turns) + 1, self.clock())
        self.turns.append(turn)
        boundary = TurnBoundary()
        events: list[dict[str, Any]] = []
        deadline = turn.sent_at + self.timeout
        deferred: float | None = None
        while True:
            wait = (deferred if deferred is not None else deadline) - self.clock()
            try:
                event = await asyncio.wait_for(self.stream.next(), max(wait, 0.0))
            except TimeoutError:
                if deferred is not None:
                    break  # the unanswered call's turnComplete was the end after all
                raise LiveTurnError(self._stalled(turn, events)) from None
            if event is None:
                raise LiveTurnError(
                    f"turn {turn.index}: the live stream ended before the agent finished it"
                )
            self._keep(turn, event)
            if turn.audio:
                await self.large.grown(sum(len(t.audio) for t in self.turns))
            events.append(event)
            count_events(len(events), f"turn {turn.index}")
            found = boundary.feed(event)
            if found == "end":
                break
            if found == "provisional":
                deferred = min(self.clock() + DEFERRED_ANSWER_TIMEOUT, deadline)
            elif deferred is not None and _says_something(event):
                deferred = None
        turn.ended_at = self.clock()
        return events

    def _stalled(self, turn: LiveTurn, events: list[dict[str, Any]]) -> str:
        spoke = any(_says_something(e) for e in events)
        what = "did not finish its answer" if spoke else "said nothing"
        return (
            f"turn {turn.index}: the agent {what} within {self.timeout:g} s "
            "(PLATFORM_EVAL_LIVE_TURN_TIMEOUT)"
        )

    def _keep(self, turn: LiveTurn, event: dict[str, Any]) -> None:
        if event.get("id"):
            turn.event_ids.add(str(event["id"]))
        heard = event.get("inputTranscription")
        if isinstance(heard, dict) and heard.get("finished") and heard.get("text"):
            turn.heard = str(heard["text"])
        for blob in _audio_parts(event):
            now = self.clock()
            turn.first_audio = turn.first_audio if turn.first_audio is not None else now
            turn.last_audio = now
            heard_audio = base64.b64decode(blob.get("data") or "")
            if len(turn.audio) + len(heard_audio) > LIVE_AUDIO.value:
                turn.audio = bytearray()  # over its cap, never used: not held while it unwinds
                raise LiveTurnError(str(over_cap(f"turn {turn.index}", LIVE_AUDIO)))
            turn.audio += heard_audio
            # Kept once, in the turn: the event keeps its part, not the bytes again as text.
            blob["data"] = ""
            turn.audio_mime = turn.audio_mime or str(blob.get("mimeType"))


def live_session(
    session: dict[str, Any], turns: list[LiveTurn], sent: list[dict[str, Any]]
) -> dict[str, Any]:
    """A live session (ADK's JSON) in the shape of a turn-based one: an invocation per user
    turn (the user's event first: the message ``sent``, as the agent was given it, where the
    stream stored none), the agent's finished transcripts as its text answers, no audio bytes,
    partial transcripts and bare control events dropped, and each turn's timings on its last
    event (``LIVE_KEY``)."""
    events = [e for e in session.get("events") or [] if isinstance(e, dict)]
    turn_of: dict[str, int] = {eid: t.index for t in turns for eid in t.event_ids}
    grouped: dict[int, list[dict[str, Any]]] = {t.index: [] for t in turns}
    waiting: list[dict[str, Any]] = []
    for event in events:
        index = turn_of.get(str(event.get("id")))
        if index is None:
            waiting.append(event)  # the user's event the runner stored: the next turn's
            continue
        grouped[index] += [*waiting, event]
        waiting = []
    if waiting and turns:
        grouped[turns[-1].index] += waiting
    out: list[dict[str, Any]] = []
    base = next((str(e["invocationId"]) for e in events if e.get("invocationId")), "live")
    for turn, message in zip(turns, sent, strict=False):
        invocation = f"{base}-turn{turn.index}"
        kept = [k for e in grouped.get(turn.index, []) if (k := _readable(e)) is not None]
        if not any(e.get("author") == "user" and e.get("content") for e in kept):
            user = {"author": "user", "content": _heard(message, turn.heard)}
            stamps = [e["timestamp"] for e in kept if isinstance(e.get("timestamp"), int | float)]
            if stamps:
                user["timestamp"] = min(stamps)
            kept.insert(0, user)
        for event in kept:
            event["invocationId"] = invocation
        last = kept[-1]
        last["customMetadata"] = {**(last.get("customMetadata") or {}), LIVE_KEY: turn.timing()}
        out += kept
    return {**session, "events": out}


def _heard(message: dict[str, Any], heard: str) -> dict[str, Any]:
    """The user's message as sent (its audio kept), with what the model heard of it as text."""
    content = {"role": "user", **message}
    parts = list(content.get("parts") or [])
    if heard and not any(p.get("text") for p in parts):
        parts.append({"text": heard})
    content["parts"] = parts
    return content


def _readable(event: dict[str, Any]) -> dict[str, Any] | None:
    """An event of a live session as a turn-based reader takes it, None for one that carries
    nothing to read (partial transcripts, bare turnComplete, audio alone)."""
    if event.get("partial"):
        return None
    event = {k: v for k, v in event.items() if k not in ("turnComplete", "interrupted")}
    parts = [p for p in _parts(event) if not _is_audio(p)]
    said = event.pop("outputTranscription", None)
    event.pop("inputTranscription", None)
    if isinstance(said, dict) and said.get("text") and not parts:
        parts = [{"text": str(said["text"])}]
        event["content"] = {"role": "model", "parts": parts}
    elif event.get("content") is not None:
        event["content"] = {**event["content"], "parts": parts}
    if not parts:
        event.pop("content", None)
    carries = ("content", "usageMetadata", "errorCode", "errorMessage")
    actions = event.get("actions")
    acted = isinstance(actions, dict) and any(actions.values())
    if not acted and not any(event.get(k) for k in carries):
        return None
    return event


def _is_audio(part: dict[str, Any]) -> bool:
    blob = part.get("inlineData")
    return isinstance(blob, dict) and str(blob.get("mimeType", "")).startswith("audio/")


async def drain(events: AsyncIterator[Any], into: asyncio.Queue[Any]) -> None:
    """Every item of ``events`` into ``into``, then None (the stream's end), or the exception
    that ended it."""
    try:
        async for item in events:
            await into.put(item)
    except Exception as exc:  # the stream's failure is the waiting turn's
        await into.put(exc)
        return
    await into.put(None)


async def next_from(queue: asyncio.Queue[Any]) -> Any:
    """The next item ``drain`` put, raising the exception it put."""
    item = await queue.get()
    if isinstance(item, BaseException):
        raise item
    return item

"""The judge service: the replay cache, retries on 429/503, the Vertex path, the accounting."""

from __future__ import annotations

import itertools
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_gemini import FakeGemini, fake_gemini, model_judges, tokens
from google.genai import types

from platform_eval.judges import JudgeCache, JudgeCacheError, Judging
from platform_eval.judges.models import GenaiBackend
from platform_eval.metrics.model_judge import CallLabel, JudgeUnavailableError

LABEL = CallLabel("final_response_match_v2", "case-1", "agent")
ASK = [types.Content(role="user", parts=[types.Part(text="Is the sky blue?")])]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    with fake_gemini(lambda seen: "yes") as server:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        yield server


def _ask(
    judging: Judging, sample: int = 0, config: types.GenerateContentConfig | None = None
) -> str:
    reply = judging.run(
        judging.generate("gemini-2.5-flash", ASK, config, sample=sample, label=LABEL)
    )
    return reply.text


def test_answers_are_cached_by_prompt_settings_and_sample(fake: FakeGemini, tmp_path: Path) -> None:
    judging = Judging(cache=tmp_path / "cache.sqlite")
    try:
        assert _ask(judging) == "yes"
        assert _ask(judging) == "yes"
        assert len(fake.seen) == 1  # the same call: answered from the cache
        _ask(judging, sample=1)
        _ask(judging, config=types.GenerateContentConfig(temperature=0.5))
        assert len(fake.seen) == 3  # another sample, other settings: new calls
        total = judging.usage.total
        assert (total.calls, total.cache_hits) == (3, 1)
        assert total.prompt_tokens == 3 * tokens("Is the sky blue?")
        assert judging.usage.by_case[("final_response_match_v2", "case-1")].calls == 3
    finally:
        judging.close()
    # HTTP options (retries, timeouts) change no answer: they are not part of the key.
    again = Judging(cache=tmp_path / "cache.sqlite")
    try:
        retrying = types.GenerateContentConfig(
            http_options=types.HttpOptions(timeout=1000), temperature=0.5
        )
        _ask(again, config=retrying)
        assert len(fake.seen) == 3
    finally:
        again.close()


def test_429_and_503_are_tried_again_after_retry_after(fake: FakeGemini) -> None:
    fake.fail_next(429, retry_after="0")
    fake.fail_next(503, retry_after=None)
    judging = Judging()
    try:
        assert _ask(judging) == "yes"
        assert len(fake.seen) == 3
        assert judging.usage.total.calls == 1
    finally:
        judging.close()


def test_a_model_that_stays_busy_is_unavailable_not_a_crash(
    fake: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    from platform_eval.judges import service

    monkeypatch.setattr(service, "MAX_ATTEMPTS", 2)
    fake.fail_next(429, count=2, retry_after="0")
    judging = Judging()
    try:
        with pytest.raises(JudgeUnavailableError, match="stayed busy after 2 tries"):
            _ask(judging)
    finally:
        judging.close()


def test_replay_only_answers_from_the_cache_or_names_the_case(
    fake: FakeGemini, tmp_path: Path
) -> None:
    recording = Judging(cache=tmp_path / "cache.sqlite")
    _ask(recording)
    recording.close()
    replaying = Judging(cache=tmp_path / "cache.sqlite", replay_only=True)
    try:
        assert _ask(replaying) == "yes"
        with pytest.raises(
            JudgeUnavailableError,
            match="no recorded judge answer for final_response_match_v2 on case case-1",
        ):
            _ask(replaying, sample=7)
        assert len(fake.seen) == 1
        assert len(replaying.replay_misses) == 1
    finally:
        replaying.close()


def test_a_corrupt_cache_is_reported_never_used(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(JudgeCacheError, match=r"cannot be used.*--judge-cache off"):
        JudgeCache(path)
    other = tmp_path / "other.sqlite"
    JudgeCache(other).put("k", "m", "answer", None)
    with sqlite3.connect(other) as db:
        db.execute("UPDATE judge_calls SET usage='{not json'")
    with pytest.raises(JudgeCacheError, match="damaged entry"):
        JudgeCache(other).get("k")


def test_the_vertex_path_reaches_the_same_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from google import genai
    from google.oauth2.credentials import Credentials

    with fake_gemini(lambda seen: "from vertex") as server:
        monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", server.url)
        client = genai.Client(
            vertexai=True,
            project="p",
            location="us-central1",
            credentials=Credentials(token="test-token"),
        )
        judging = Judging(gemini=GenaiBackend(client))
        try:
            assert _ask(judging) == "from vertex"
        finally:
            judging.close()
        (seen,) = server.seen
        assert seen.path.endswith(
            "/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash"
            ":generateContent"
        )


@pytest.mark.slow  # importing LiteLLM takes seconds
def test_a_litellm_model_is_asked_through_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("litellm", reason="LiteLLM is the optional extra platform-eval[litellm]")
    with fake_gemini(lambda seen: "from litellm") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        judging = Judging()
        try:
            reply = judging.run(
                judging.generate(
                    "openai/gpt-4o-mini",
                    ASK,
                    types.GenerateContentConfig(temperature=0.0),
                    sample=0,
                    label=LABEL,
                )
            )
        finally:
            judging.close()
    assert reply.text == "from litellm"
    (seen,) = server.seen
    assert seen.path.endswith("/chat/completions") and seen.model == "gpt-4o-mini"
    assert seen.body["messages"] == [{"role": "user", "content": "Is the sky blue?"}]
    total = judging.usage.total
    assert (total.calls, total.prompt_tokens) == (1, tokens("Is the sky blue?"))


def _counting_answers() -> Any:
    """A model whose every answer differs: the n-th call answers ``answer n``."""
    count = itertools.count()
    return lambda seen: f"answer {next(count)}"


def test_identical_requests_of_different_askers_keep_their_own_answers(tmp_path: Path) -> None:
    """Two cases (or --num-runs candidates) sending the same request get the answers they got
    the first time on a re-run, in whatever order they ask: not one of them twice."""
    askers = [CallLabel("m", "case-a", "agent"), CallLabel("m", "case-b", "agent")]
    with model_judges(_counting_answers(), cache=tmp_path / "cache.sqlite") as (judges, fake):
        first = {label.case: _ask_as(judges.model, label) for label in askers}
    assert len(fake.seen) == 2 and len(set(first.values())) == 2
    for options in ({}, {"replay_only": True}):
        with model_judges(_counting_answers(), cache=tmp_path / "cache.sqlite", **options) as (
            judges,
            fake,
        ):
            again = {label.case: _ask_as(judges.model, label) for label in reversed(askers)}
        assert again == first and not fake.seen


def test_adk_call_ids_do_not_make_the_same_conversation_a_new_call(tmp_path: Path) -> None:
    def asked(call_id: str) -> list[types.Content]:
        text = f'{{"function_call": {{"id": "{call_id}", "name": "get_weather"}}}}'
        return [types.Content(role="user", parts=[types.Part(text=text)])]

    first, second = (f"adk-{uuid.uuid4()}" for _ in range(2))
    with model_judges(_counting_answers(), cache=tmp_path / "cache.sqlite") as (judges, fake):
        judging = judges.model
        answers = [
            judging.run(judging.generate("m", asked(call_id), None, sample=0, label=LABEL)).text
            for call_id in (first, second)
        ]
    assert answers == ["answer 0", "answer 0"] and len(fake.seen) == 1
    assert first in fake.seen[0].prompt  # the prompt itself is sent as it is


def _ask_as(judging: Any, label: CallLabel) -> str:
    reply = judging.run(judging.generate("gemini-2.5-flash", ASK, None, sample=0, label=label))
    return str(reply.text)


def test_an_answer_past_the_size_cap_is_refused_and_not_cached(tmp_path: Path) -> None:
    from platform_eval.judges.service import MAX_ANSWER_CHARS

    huge = "x" * (MAX_ANSWER_CHARS + 1)
    with model_judges(lambda seen: huge, cache=tmp_path / "cache.sqlite") as (judges, _):
        with pytest.raises(JudgeUnavailableError, match="answers over 1,048,576 are refused"):
            _ask_as(judges.model, LABEL)
        assert judges.model.cache is not None and len(judges.model.cache) == 0


def test_an_answer_past_what_a_judge_could_write_is_not_read_whole(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """Through the judges' own google-genai client: an answer announcing more than
    MAX_ANSWER_BYTES is refused before its body is read, and the call is NOT judged."""
    from platform_eval.judges.answer_cap import MAX_ANSWER_BYTES

    fake.rule = lambda seen: "x" * (MAX_ANSWER_BYTES + 1)
    judging = Judging(cache=tmp_path / "cache.sqlite")
    try:
        with pytest.raises(JudgeUnavailableError, match="more than the 8,388,608 a judge answer"):
            _ask(judging)
        assert judging.cache is not None and len(judging.cache) == 0
        fake.rule = lambda seen: "yes"
        assert _ask(judging, sample=1) == "yes"  # the same client, still usable
    finally:
        judging.close()


def test_an_unannounced_answer_stops_being_read_at_the_cap() -> None:
    """An answer with no length (chunked), or one encoded though none was asked for: the
    transport reads no more than its cap (a server sending such answers: made up here)."""
    import asyncio

    import httpx

    from platform_eval.judges.answer_cap import AnswerCap, AnswerTooLargeError

    sent: list[int] = []
    asked: list[str] = []

    async def chunks() -> Any:
        for _ in range(1000):
            sent.append(1)
            yield b"x" * 1024

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.headers["accept-encoding"])
        if request.url.path == "/gzip":
            return httpx.Response(200, headers={"content-encoding": "gzip"}, content=b"")
        return httpx.Response(200, content=chunks())

    async def read(path: str) -> bytes:
        transport = AnswerCap(limit=10 * 1024, inner=httpx.MockTransport(answer))
        async with httpx.AsyncClient(transport=transport) as client:
            return (await client.get(f"http://model.test{path}")).content

    with pytest.raises(AnswerTooLargeError, match="went past 10,240 bytes"):
        asyncio.run(read("/chunked"))
    assert len(sent) <= 12  # stopped within a chunk or two of the cap, not 1,000
    with pytest.raises(AnswerTooLargeError, match="gzip-encoded though none was asked for"):
        asyncio.run(read("/gzip"))
    assert asked == ["identity", "identity"]


def test_an_answer_the_cache_cannot_keep_is_still_used(tmp_path: Path) -> None:
    """Another process holds the cache file's write lock: the paid answer is used, and only
    its keeping is lost (with a warning), not the answer."""
    cache_file = tmp_path / "cache.sqlite"
    with model_judges(lambda seen: "kept or not", cache=cache_file) as (judges, _):
        judging = judges.model
        assert judging.cache is not None
        judging.cache._db.execute("PRAGMA busy_timeout=50")  # not 30 s in a test
        other = sqlite3.connect(str(cache_file), isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        try:
            assert _ask_as(judging, LABEL) == "kept or not"
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert len(judging.cache) == 0


def test_an_answer_a_metric_cannot_read_is_never_replayed(fake: FakeGemini, tmp_path: Path) -> None:
    """The metric says an answer held no score (``unusable``): the cache forgets it, the next
    ask reaches the model, and only a readable answer is replayed after it."""
    cache = tmp_path / "cache.sqlite"
    fake.rule = lambda seen: "no verdict here"
    judging = Judging(cache=cache)
    try:
        reply = judging.run(judging.generate("gemini-2.5-flash", ASK, None, sample=0, label=LABEL))
        assert judging.unusable(reply) is False  # asked just now: asking again changes nothing
        assert judging.unusable_answers == 1
        fake.rule = lambda seen: "yes"
        assert _ask(judging) == "yes" and len(fake.seen) == 2
        assert _ask(judging) == "yes" and len(fake.seen) == 2  # the readable one is replayed
    finally:
        judging.close()


def test_a_replayed_answer_found_unreadable_is_forgotten_unless_replay_only(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """A cache written before (by an older version, or a judge that answered badly): its
    unreadable answer, replayed, is forgotten (True: asking again reaches the model); a
    replay-only run leaves the user's cache as it is."""
    cache = tmp_path / "cache.sqlite"
    fake.rule = lambda seen: "no verdict here"
    writer = Judging(cache=cache)
    try:
        _ask(writer)  # kept: the judge cannot tell a readable answer from another
    finally:
        writer.close()
    for replay_only, forgotten in ((True, False), (False, True)):
        judging = Judging(cache=cache, replay_only=replay_only)
        try:
            reply = judging.run(
                judging.generate("gemini-2.5-flash", ASK, None, sample=0, label=LABEL)
            )
            assert reply.text == "no verdict here" and len(fake.seen) == 1
            assert judging.unusable(reply) is forgotten
        finally:
            judging.close()
    fake.rule = lambda seen: "yes"
    judging = Judging(cache=cache)
    try:
        assert _ask(judging) == "yes" and len(fake.seen) == 2
    finally:
        judging.close()


def test_no_judge_cache_asks_the_model_and_its_answers_replace_those_kept(
    fake: FakeGemini, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite"
    fake.rule = lambda seen: "old"
    for refresh, expected, calls in ((False, "old", 1), (True, "new", 2), (False, "new", 2)):
        if refresh:
            fake.rule = lambda seen: "new"
        judging = Judging(cache=cache, refresh=refresh)
        try:
            assert _ask(judging) == expected and len(fake.seen) == calls
        finally:
            judging.close()
    with pytest.raises(ValueError, match="replay only"):
        Judging(cache=cache, refresh=True, replay_only=True)


def test_a_replayed_answer_that_is_not_the_json_asked_for_is_asked_again_at_once(
    tmp_path: Path,
) -> None:
    from platform_eval.metrics.model_rubrics import JudgeError, ask_json

    cache = tmp_path / "cache.sqlite"
    schema = {"type": "object"}

    def ask(judges: Any) -> Any:
        return ask_json(judges.model, "gemini-test", "Rate it", schema, dict, None, LABEL)

    with model_judges(lambda seen: "not json", cache=cache) as (judges, fake):
        with pytest.raises(JudgeError, match=r"not the JSON asked for.*not kept"):
            ask(judges)
        judging = judges.model
        # Kept by a judge that was never told (an older version): replayed next time.
        asked = [types.Content(role="user", parts=[types.Part(text="Rate it")])]
        config = types.GenerateContentConfig(
            temperature=0.0, response_mime_type="application/json", response_schema=schema
        )
        judging.run(judging.generate("gemini-test", asked, config, sample=0, label=LABEL))
    with model_judges(lambda seen: '{"score": 5}', cache=cache) as (judges, fake):
        assert ask(judges) == {"score": 5}
        assert len(fake.seen) == 1  # the replayed answer was not used: the model was asked
        assert judges.model.unusable_answers == 1 and judges.model.usage.total.cache_hits == 1

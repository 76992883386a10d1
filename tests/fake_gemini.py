"""A fake Gemini REST server on loopback: records every request and answers by rule.

It speaks what google-genai sends, on both of its paths: the Gemini API
(``POST /v1beta/models/{model}:generateContent``, reached through ``GOOGLE_GEMINI_BASE_URL``)
and Vertex AI (``POST /{version}/projects/{p}/locations/{l}/publishers/google/models/{model}
:generateContent``, through ``GOOGLE_VERTEX_BASE_URL``). Each answer carries ``usageMetadata``
as the service's does, so token accounting is tested against numbers the server chose.

A rule is a function of the request (its model and the text of its contents) that returns the
answer's text; ``fail_next`` makes the next answers 429 or 503 with a ``Retry-After``; a delay
per call stands in for a model's latency in benchmarks.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from sockets import serve_in_thread

_PATH = re.compile(
    r"^/(?P<version>v1beta1?|v1)/(?:projects/[^/]+/locations/[^/]+/publishers/google/)?"
    r"models/(?P<model>[^/:]+):generateContent$"
)


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    path: str
    model: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def prompt(self) -> str:
        """The text of every part of every content (or every chat message), joined: what the
        judge was asked."""
        if "messages" in self.body:
            return "\n".join(str(m.get("content") or "") for m in self.body["messages"])
        return "\n".join(
            part.get("text", "")
            for content in self.body.get("contents", [])
            for part in content.get("parts", [])
        )


#: A rule answers with text, with a model ``content`` object (function calls, several parts), or
#: with ``{"content": ..., **more}``: a candidate that carries more (``groundingMetadata``).
Rule = Callable[[Seen], "str | dict[str, Any]"]


def tokens(text: str) -> int:
    """The fake's token count of a text: one per four characters, at least one."""
    return max(1, len(text) // 4)


@dataclass
class FakeGemini:
    rule: Rule
    delay: float = 0.0
    seen: list[Seen] = field(default_factory=list)
    url: str = ""
    _failures: list[tuple[int, str | None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    most_in_flight: int = 0
    #: Calls at once the model takes: a call beyond it is answered 429 at once (a quota).
    quota: int | None = None
    #: The Retry-After of a quota's 429 (None: no header).
    quota_retry_after: str | None = None
    #: Calls answered 429 for the quota.
    refused: int = 0
    #: The usageMetadata of each answer given, with the request it answered.
    answered: list[tuple[Seen, dict[str, int]]] = field(default_factory=list)

    def fail_next(self, status: int, count: int = 1, retry_after: str | None = "0") -> None:
        with self._lock:
            self._failures += [(status, retry_after)] * count

    def answer(
        self, path: str, raw: bytes, headers: dict[str, str]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        if path.endswith("/chat/completions"):  # an OpenAI-compatible route, for LiteLLM
            return _chat(self, path, raw, headers)  # type: ignore[no-any-return]
        match = _PATH.match(path)
        if match is None:
            return (
                404,
                {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}},
                {},
            )
        seen = Seen(path, match["model"], json.loads(raw), headers)
        with self._lock:
            self.seen.append(seen)
            failure = self._failures.pop(0) if self._failures else None
            if failure is None and self.quota is not None and self.in_flight >= self.quota:
                failure = (429, self.quota_retry_after)
                self.refused += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.delay and failure is None:
                time.sleep(self.delay)
            if failure is not None:
                status, retry_after = failure
                extra = {"retry-after": retry_after} if retry_after is not None else {}
                name = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
                return (
                    status,
                    {"error": {"code": status, "message": "try later", "status": name}},
                    extra,
                )
            answered = self.rule(seen)
        finally:
            with self._lock:
                self.in_flight -= 1
        extra: dict[str, Any] = {}
        if isinstance(answered, dict) and "content" in answered:
            # A whole candidate: its content and what else it carries (groundingMetadata).
            extra = {k: v for k, v in answered.items() if k != "content"}
            answered = answered["content"]
        if isinstance(answered, str):
            content: dict[str, Any] = {"role": "model", "parts": [{"text": answered}]}
            text = answered
        else:
            content = answered
            text = json.dumps(answered)
        prompt_tokens, answer_tokens = tokens(seen.prompt), tokens(text)
        usage = {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": answer_tokens,
            "thoughtsTokenCount": 3,
            "totalTokenCount": prompt_tokens + answer_tokens + 3,
        }
        with self._lock:
            self.answered.append((seen, usage))
        return (
            200,
            {
                "candidates": [
                    {
                        "content": content,
                        "finishReason": "STOP",
                        "index": 0,
                        **extra,
                    }
                ],
                "usageMetadata": usage,
                "modelVersion": seen.model,
            },
            {},
        )


#: google-adk's random function-call ids, which reach its judges' prompts.
_ADK_CALL_ID = re.compile(r"adk-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _flip(text: str, salt: str) -> bool:
    """A verdict by a hash of the text, blind to ADK's random call ids: the same conversation
    run twice (by adk eval, then by us) gets the same verdict."""
    text = _ADK_CALL_ID.sub("adk-call", text)
    return hashlib.sha256(f"{salt}|{text}".encode()).digest()[0] % 3 != 0


def adk_judge_rule(seen: Seen) -> str:
    """A judge that answers every ADK prompt in the form ADK parses, by a hash of the prompt:
    deterministic, so both sides get the same answer to the same prompt."""
    prompt = seen.prompt
    if '"is_valid"' in prompt:  # ADK's check of a simulated user's turn
        verdict = "valid" if _flip(prompt, "u") else "invalid"
        return f'{{"reasoning": "kept to the plan", "is_valid": "{verdict}"}}'
    if "is_the_agent_response_valid" in prompt:
        verdict = "valid" if _flip(prompt, "v2") else "invalid"
        return f'{{"reasoning": "compared", "is_the_agent_response_valid": "{verdict}"}}'
    if "**Response Begin**" in prompt:
        response = prompt.split("**Response Begin**", 1)[1].split("**Response End**", 1)[0]
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", response.strip()) if s.strip()]
        return "\n".join(f"<sentence>{s}</sentence>" for s in sentences)
    if "**Sentences Begin**" in prompt:
        block = prompt.split("**Sentences Begin**")[-1].split("**Sentences End**")[0]
        blocks = []
        for sentence in re.findall(r"<sentence>(.*?)</sentence>", block, re.DOTALL):
            label = "supported" if _flip(sentence, "h") else "unsupported"
            blocks.append(
                f"sentence: {sentence}\nlabel: {label}\nrationale: checked\n"
                "supporting_excerpt: null\ncontradicting_excerpt: null"
            )
        return "\n".join(blocks)
    if '{"verdicts"' in prompt:  # platform-eval's rubric judge for the service's metrics
        listed = re.findall(r"^- \[([^\]]+)\] (.*)$", prompt, re.M)
        return json.dumps(
            {
                "verdicts": [
                    {
                        "rubric_id": rubric_id,
                        "rubric": text,
                        "verdict": _flip(prompt + rubric_id, "s"),
                        "reasoning": f"read the conversation for {rubric_id}",
                    }
                    for rubric_id, text in listed
                ]
            }
        )
    rubrics = re.findall(r"\[id: ([^\]]+)\] (.*)", prompt)
    answers = []
    for rubric_id, text in rubrics:
        yes = _flip(prompt + rubric_id, "r")
        answers.append(
            f"ID: {rubric_id}\nProperty: {text.strip()}\nEvidence: seen\n"
            f"Rationale: judged {rubric_id}\nVerdict: {'yes' if yes else 'no'}\n"
        )
    return "\n".join(answers)


def _chat_answer(model: str, text: str, prompt: str) -> dict[str, Any]:
    """An OpenAI chat completion, as LiteLLM reads one."""
    prompt_tokens, answer_tokens = tokens(prompt), tokens(text)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": answer_tokens,
            "total_tokens": prompt_tokens + answer_tokens,
        },
    }


def _chat(fake: FakeGemini, path: str, raw: bytes, headers: dict[str, str]) -> Any:
    body = json.loads(raw)
    seen = Seen(path, str(body.get("model", "")), body, headers)
    with fake._lock:
        fake.seen.append(seen)
    text = fake.rule(seen)
    assert isinstance(text, str), "the chat route answers text only"
    return 200, _chat_answer(seen.model, text, seen.prompt), {}


def _handler(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go in two writes: without TCP_NODELAY the second waits ~40 ms for
        # the client's delayed ACK, a latency no real server adds.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            status, body, extra = fake.answer(
                self.path.split("?", 1)[0], raw, {k.lower(): v for k, v in self.headers.items()}
            )
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


class _Server(ThreadingHTTPServer):
    # The standard library listens with a backlog of 5: more clients than that connecting at
    # once have their SYN dropped and retry a second later, a latency no real server adds.
    request_queue_size = 1024
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away mid-request (its call cancelled) is not the server's error:
        # the standard library would print a traceback into the stderr the tests read.
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


@contextmanager
def fake_gemini(
    rule: Rule, *, delay: float = 0.0, quota: int | None = None
) -> Iterator[FakeGemini]:
    """A FakeGemini serving on a free loopback port until the block ends; ``quota``: calls at
    once beyond which it answers 429."""
    fake = FakeGemini(rule, delay=delay, quota=quota)
    server = _Server(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_port}"
    serve_in_thread(server, "fake-gemini")
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def model_judges(
    rule: Rule, *, model: str = "gemini-test", **options: Any
) -> Iterator[tuple[Any, FakeGemini]]:
    """The judges the product builds (``Judges`` with a ``Judging`` model judge on google-genai),
    asking a FakeGemini over HTTP; ``options`` go to ``Judging`` (cache, replay_only, ...)."""
    from google import genai
    from google.genai import types as genai_types

    from platform_eval.judges import Judging
    from platform_eval.judges.models import GenaiBackend
    from platform_eval.metrics import Judges

    with fake_gemini(rule) as fake:
        client = genai.Client(
            api_key="test-key", http_options=genai_types.HttpOptions(base_url=fake.url)
        )
        judges = Judges(model=Judging(model, gemini=GenaiBackend(client), **options))
        try:
            yield judges, fake
        finally:
            judges.close()


_ADK_CALL_ID = re.compile(r"adk-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _stable(body: dict[str, Any]) -> str:
    """A request byte for byte but for ADK's random function-call ids, numbered in order."""
    text = json.dumps(body, sort_keys=True)
    ids: dict[str, str] = {}
    return _ADK_CALL_ID.sub(lambda m: ids.setdefault(m[0], f"adk-call-{len(ids)}"), text)


def judge_requests(seen: list[Seen]) -> Counter[str]:
    """Every judge request (not the agent's, which declare tools), byte for byte but for
    ADK's random function-call ids, numbered in order of appearance."""
    return Counter(_stable(s.body) for s in seen if not s.body.get("tools"))


def agent_requests(seen: list[Seen]) -> Counter[str]:
    """Every request of an agent (those that declare tools), as ``judge_requests`` reads them."""
    return Counter(_stable(s.body) for s in seen if s.body.get("tools"))

"""A fake Gemini Live server on loopback: the Live API's WebSocket (``BidiGenerateContent``), as
google-genai speaks it, over TLS (google-genai always connects with ``wss://``), and the same
REST routes as ``fake_gemini`` on the same address, so that one ``GOOGLE_GEMINI_BASE_URL``
serves an agent's Live session and the judges.

The protocol, as the Gemini API's Live reference and google-genai's ``live.py`` give it: the
client's first message is ``setup`` (answered ``setupComplete``); a user turn comes as
``clientContent`` (text turns, ``turnComplete``) or as ``realtimeInput`` audio; the server
answers a turn with ``serverContent`` messages: ``modelTurn`` parts of inline PCM audio,
``outputTranscription`` text, then ``turnComplete`` (with ``usageMetadata``), or with a
``toolCall`` whose ``toolResponse`` the client sends back.

Speech is faked both ways: the "audio" the server sends is the transcript's bytes padded to
whole 16-bit samples, and audio the client sends is heard as the UTF-8 text of its non-zero
bytes (a turn's audio ends with a block of silence, which is where the server's voice activity
detection ends the user's turn, as Gemini's does).
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_gemini import FakeGemini, Rule

#: The agent's audio, as Gemini Live sends it: 16-bit PCM at 24 kHz.
AUDIO_MIME = "audio/pcm;rate=24000"


@dataclass(frozen=True)
class LiveAnswer:
    """What the fake model says to a turn: ``text`` (spoken: audio and its transcript), or a
    tool call (``call``: name, ``args``), after which it hears the tool's response."""

    text: str = ""
    call: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    #: Say nothing, and never end the turn: a model that hangs.
    silent: bool = False


#: Answers a turn: (what the user said, the session's setup, the tool responses heard so far in
#: this turn) -> the next thing to say.
LiveRule = Callable[[str, dict[str, Any], list[dict[str, Any]]], LiveAnswer]


def speech(text: str) -> bytes:
    """The fake's speech for ``text``: its bytes, padded to whole 16-bit samples."""
    data = text.encode()
    return data + b"\0" * (len(data) % 2)


def heard(pcm: bytes) -> str:
    """What the fake hears in audio: the text of its non-zero bytes."""
    return pcm.replace(b"\0", b"").decode("utf-8", "replace")


@dataclass
class LiveSession:
    """One Live connection as the server saw it."""

    setup: dict[str, Any]
    received: list[dict[str, Any]] = field(default_factory=list)
    #: Tool calls made so far.
    calls: int = 0


@dataclass
class FakeGeminiLive:
    rule: LiveRule
    rest: FakeGemini
    #: Seconds before the first audio of an answer, and between its chunks.
    first_delay: float = 0.0
    chunk_delay: float = 0.0
    #: Chunks an answer's audio is sent in.
    chunks: int = 3
    sessions: list[LiveSession] = field(default_factory=list)
    url: str = ""
    cert_file: str = ""

    async def serve(self, websocket: Any) -> None:
        await websocket.accept()
        first = json.loads(await websocket.receive_text())
        session = LiveSession(first.get("setup") or {})
        self.sessions.append(session)
        await websocket.send_text(json.dumps({"setupComplete": {}}))
        audio = bytearray()
        responses: list[dict[str, Any]] = []
        said = ""
        while True:
            try:
                message = json.loads(await websocket.receive_text())
            except Exception:  # the client closed the connection
                return
            message = _camel(message)
            session.received.append(message)
            if "clientContent" in message:
                content = message["clientContent"]
                if not content.get("turnComplete"):
                    continue
                turns = content.get("turns") or []
                said = "".join(
                    part.get("text", "") for part in (turns[-1].get("parts") if turns else [])
                )
                responses = []
            elif "realtimeInput" in message:
                chunk = _realtime_audio(message["realtimeInput"])
                if chunk is None:
                    continue
                if chunk.strip(b"\0") or not audio:
                    audio += chunk
                    continue
                said, audio, responses = heard(bytes(audio)), bytearray(), []
                await websocket.send_text(
                    json.dumps({"serverContent": {"inputTranscription": {"text": said}}})
                )
            elif "toolResponse" in message:
                responses += message["toolResponse"].get("functionResponses") or []
            else:
                continue
            await self._answer(websocket, self.rule(said, session.setup, responses), session)

    async def _answer(self, websocket: Any, answer: LiveAnswer, session: LiveSession) -> None:
        if answer.silent:
            return
        if answer.call is not None:
            # Numbered per connection: the same conversation gets the same ids, run to run.
            session.calls += 1
            call = {"id": f"call-{session.calls}", "name": answer.call, "args": answer.args}
            await websocket.send_text(json.dumps({"toolCall": {"functionCalls": [call]}}))
            # The model's turn ends with its call (Gemini 2.x Live); the answer is a new turn.
            await websocket.send_text(json.dumps({"serverContent": {"turnComplete": True}}))
            return
        await asyncio.sleep(self.first_delay)
        pcm = speech(answer.text)
        size = -(-len(pcm) // self.chunks) + (-(-len(pcm) // self.chunks)) % 2
        pieces = [pcm[i : i + size] for i in range(0, len(pcm), size)] or [b""]
        words = answer.text.split(" ")
        per = -(-len(words) // len(pieces))
        for index, piece in enumerate(pieces):
            if index:
                await asyncio.sleep(self.chunk_delay)
            data = base64.b64encode(piece).decode()
            part = {"inlineData": {"mimeType": AUDIO_MIME, "data": data}}
            await websocket.send_text(
                json.dumps({"serverContent": {"modelTurn": {"parts": [part]}}})
            )
            spoken = " ".join(words[index * per : (index + 1) * per])
            if spoken:
                text = spoken if index == 0 else f" {spoken}"
                await websocket.send_text(
                    json.dumps({"serverContent": {"outputTranscription": {"text": text}}})
                )
        await websocket.send_text(json.dumps({"serverContent": {"generationComplete": True}}))
        usage = {"promptTokenCount": 10, "responseTokenCount": len(words), "totalTokenCount": 20}
        await websocket.send_text(
            json.dumps({"serverContent": {"turnComplete": True}, "usageMetadata": usage})
        )


def _camel(value: Any) -> Any:
    """A client message's keys in camelCase: google-genai sends some in snake_case, which the
    service takes as protobuf's JSON reader does."""
    if isinstance(value, dict):
        return {
            _camel_key(k) if k not in ("args", "response") else k: (
                v if k in ("args", "response") else _camel(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _realtime_audio(given: dict[str, Any]) -> bytes | None:
    """The audio bytes of a ``realtimeInput`` message (``audio`` or the older ``mediaChunks``)."""
    blobs = [given["audio"]] if isinstance(given.get("audio"), dict) else []
    blobs += [b for b in given.get("mediaChunks") or [] if isinstance(b, dict)]
    found = [
        base64.b64decode(b.get("data") or "") for b in blobs if "audio" in b.get("mimeType", "")
    ]
    return b"".join(found) if found else None


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, written into ``folder``."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def _app(fake: FakeGeminiLive) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route, WebSocketRoute

    async def rest(request: Request) -> JSONResponse:
        raw = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        status, body, extra = await asyncio.to_thread(
            fake.rest.answer, request.url.path, raw, headers
        )
        return JSONResponse(body, status_code=status, headers=extra)

    return Starlette(
        routes=[
            WebSocketRoute("/ws/{method:path}", fake.serve),
            Route("/{path:path}", rest, methods=["POST"]),
        ]
    )


@contextmanager
def fake_gemini_live(
    rule: LiveRule,
    rest_rule: Rule = lambda seen: "",
    *,
    first_delay: float = 0.0,
    chunk_delay: float = 0.0,
) -> Iterator[FakeGeminiLive]:
    """A FakeGeminiLive serving on a free loopback port over TLS until the block ends; its
    ``cert_file`` is what a client trusts (``SSL_CERT_FILE``)."""
    import uvicorn

    folder = Path(tempfile.mkdtemp(prefix="fake-live-"))
    cert_file, key_file = _certificate(folder)
    fake = FakeGeminiLive(rule, FakeGemini(rest_rule), first_delay, chunk_delay)
    fake.cert_file = str(cert_file)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    fake.url = f"https://127.0.0.1:{port}"
    config = uvicorn.Config(
        _app(fake),
        log_level="warning",
        lifespan="off",
        ssl_certfile=str(cert_file),
        ssl_keyfile=str(key_file),
        ws="websockets-sansio",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: server.run(sockets=[sock]), name="fake-gemini-live", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the fake Live server did not start")
        time.sleep(0.01)
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        for file in (cert_file, key_file):
            file.unlink(missing_ok=True)
        folder.rmdir()

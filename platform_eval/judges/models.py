"""The models a judge asks: Gemini through google-genai, and any LiteLLM model.

Gemini goes through google-genai with its own settings (``GOOGLE_API_KEY``, or Vertex AI with
Application Default Credentials when ``GOOGLE_GENAI_USE_VERTEXAI`` is set;
``GOOGLE_GEMINI_BASE_URL`` and ``GOOGLE_VERTEX_BASE_URL``; http options on the client), the same
way google-adk's judges reach it. A model name that LiteLLM routes (``openai/gpt-4o``,
``anthropic/...``, ``ollama/...``) goes through LiteLLM, as ADK's model registry allows; it is
the optional extra ``platform-eval[litellm]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from google.genai.types import GenerateContentConfig

if TYPE_CHECKING:
    from google import genai

from .._model_errors import BUSY_STATUSES, answer_text, retry_after, status_of
from ..types import Content


@dataclass(frozen=True)
class Answer:
    text: str
    #: The usage metadata as JSON (promptTokenCount, candidatesTokenCount, ...), or None.
    usage: dict[str, Any] | None


class RetryableError(Exception):
    """The model is busy (429) or unavailable (503): worth another try after ``retry_after``."""

    def __init__(self, message: str, retry_after: float | None, status: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class ModelBackend(Protocol):
    async def generate(
        self, model: str, contents: list[Content], config: GenerateContentConfig | None
    ) -> Answer: ...


class GenaiBackend:
    """Gemini through google-genai's async client; one client per event loop."""

    def __init__(self, client: genai.Client | None = None) -> None:
        self._client = client
        #: The HTTP client of the google-genai client made here, closed with the backend.
        self._http: Any = None

    def _genai(self) -> Any:
        if self._client is None:
            import httpx
            from google import genai
            from google.genai import types as genai_types

            from .answer_cap import AnswerCap

            # One attempt a call: the judge's own loop retries (with its probe and its stop on
            # an outage). Without retry options google-genai retries a refused connection
            # itself, after 1-10 s each time.
            once = genai_types.HttpRetryOptions(attempts=1)
            # Answers read no further than a judge's could go (google-genai reads them whole).
            capped = self._http = httpx.AsyncClient(transport=AnswerCap(), timeout=None)
            self._client = genai.Client(
                http_options=genai_types.HttpOptions(retry_options=once, httpx_async_client=capped)
            )
        return self._client

    async def aclose(self) -> None:
        """Closes the connections of the client made here (a client given is the giver's)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None
            self._client = None

    async def generate(
        self, model: str, contents: list[Content], config: GenerateContentConfig | None
    ) -> Answer:
        from google.genai import errors as genai_errors

        try:
            response = await self._genai().aio.models.generate_content(
                model=model, contents=contents, config=config
            )
        except genai_errors.APIError as exc:
            if exc.code in BUSY_STATUSES:
                busy = answer_text(exc) or str(exc)
                raise RetryableError(busy, retry_after(exc), exc.code) from None
            raise
        usage = response.usage_metadata
        return Answer(
            response.text or "",
            usage.model_dump(mode="json", by_alias=True, exclude_none=True) if usage else None,
        )


class LiteLlmBackend:
    """Any model LiteLLM routes; the contents become chat messages as ADK's LiteLlm does."""

    async def generate(
        self, model: str, contents: list[Content], config: GenerateContentConfig | None
    ) -> Answer:
        try:
            import litellm
        except ImportError:
            raise RuntimeError(
                f"the judge model {model!r} goes through LiteLLM, which is not installed: "
                "pip install 'platform-eval[litellm]'"
            ) from None
        messages = [
            {
                "role": "assistant" if content.role == "model" else "user",
                "content": "\n".join(p.text for p in content.parts or [] if p.text),
            }
            for content in contents
        ]
        temperature = getattr(config, "temperature", None) if config is not None else None
        try:
            response = await litellm.acompletion(
                model=model, messages=messages, temperature=temperature
            )
        except Exception as exc:
            status = status_of(exc)
            if status in BUSY_STATUSES:
                raise RetryableError(f"{status}: {exc}", retry_after(exc), status) from None
            raise
        usage = getattr(response, "usage", None)
        return Answer(
            response.choices[0].message.content or "",
            {
                "promptTokenCount": getattr(usage, "prompt_tokens", 0),
                "candidatesTokenCount": getattr(usage, "completion_tokens", 0),
            }
            if usage is not None
            else None,
        )


def is_litellm_model(model: str) -> bool:
    """A ``provider/model`` name that is not Gemini's own (``models/gemini-...``, or a Vertex
    resource name)."""
    return "/" in model and not model.startswith(("models/", "projects/", "publishers/"))

"""Until the agent's model answers once, its calls are a probe: a model that is down, out of
reach or unknown is found in seconds, not after minutes of the retries meant for a passing
outage.

``adk eval`` adds google-adk's retry options to every model call (seven tries, 5 s doubling up
to 120 s): right for a model that answered and then stumbles, minutes of waiting for one that
never answers. Here the calls made before the first answer try three times, a second or less
apart, and wait at most ``PLATFORM_EVAL_AGENT_PROBE_TIMEOUT`` seconds (60) for an answer (a
model that takes the connection and says nothing would hold the run for ever: google-genai
sets no deadline); every call after it gets adk eval's options, as adk eval gives them.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from .._env import positive_number

#: The tries of a call made before the model has answered once (google-genai's HttpRetryOptions).
PROBE_RETRY_OPTIONS = {
    "attempts": 3,
    "initial_delay": 0.5,
    "max_delay": 1.0,
    "exp_base": 2.0,
    "jitter": 0.25,
}
#: How long a call made before the model has answered once waits for its answer, in seconds.
DEFAULT_PROBE_TIMEOUT = 60.0


def probe_timeout() -> float:
    return positive_number("PLATFORM_EVAL_AGENT_PROBE_TIMEOUT", DEFAULT_PROBE_TIMEOUT)


class ModelProbe:
    """Whether the agent's model has answered a call of this run."""

    def __init__(self) -> None:
        self._answered = threading.Event()

    @property
    def answered(self) -> bool:
        return self._answered.is_set()

    def saw_an_answer(self) -> None:
        self._answered.set()


def retry_plugin(probe: ModelProbe | None) -> Any:
    """The plugin that gives each model call its retry options (google-adk's, or the probe's
    while ``probe`` has seen no answer); None where google-adk has no retry options to give."""
    plugin_class = _plugin_class()
    return plugin_class(probe) if plugin_class is not None else None


@functools.cache
def _plugin_class() -> Any:
    try:
        from google.adk.evaluation import _retry_options_utils as adk_retries
    except ImportError:  # an ADK without it runs without it, as its own adk eval does
        return None
    from google.adk.plugins.base_plugin import BasePlugin
    from google.genai import types

    probe_options = types.HttpRetryOptions(
        **PROBE_RETRY_OPTIONS,
        http_status_codes=list(adk_retries._RETRY_HTTP_STATUS_CODES),
    )

    class ModelRetries(BasePlugin):
        def __init__(self, probe: ModelProbe | None) -> None:
            # adk eval's plugin name: what an agent's own callbacks may look for.
            super().__init__(name="ensure_retry_options")
            self.probe = probe

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            if self.probe is not None and not self.probe.answered:
                config = llm_request.config = llm_request.config or types.GenerateContentConfig()
                config.http_options = config.http_options or types.HttpOptions()
                # The agent's own retry options and deadline, when it has them, are its to keep.
                config.http_options.retry_options = (
                    config.http_options.retry_options or probe_options.model_copy()
                )
                if config.http_options.timeout is None:
                    config.http_options.timeout = int(probe_timeout() * 1000)  # milliseconds
                return
            adk_retries.add_default_retry_options_if_not_present(llm_request)

        async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
            if self.probe is not None and not getattr(llm_response, "error_code", None):
                self.probe.saw_an_answer()

    return ModelRetries

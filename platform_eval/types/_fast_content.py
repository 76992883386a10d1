"""google-genai ``Content`` built from JSON without google-genai's per-part validation.

google-genai validates every ``Part`` through a custom ``__init__`` and a before-validator that
walks all of its fields; on agent items that is most of the time spent parsing (issue 11). The
shapes agent data is made of (text, thoughts, function calls and responses, inline and file
data) are built here directly, each value type-checked as pydantic would; anything else (another
field, a value of another type, a null) returns None and takes google-genai's own path, so the
result is always the same object google-genai would build, and errors are always its errors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from google.genai import types as genai
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

_BYTES: TypeAdapter[bytes] = TypeAdapter(bytes, config=ConfigDict(val_json_bytes="base64"))

Builder = Callable[[Any], Any]
M = TypeVar("M", bound=BaseModel)


def _string(value: Any) -> Any:
    return value if type(value) is str else _MISS


def _boolean(value: Any) -> Any:
    return value if type(value) is bool else _MISS


def _mapping(value: Any) -> Any:
    return value if type(value) is dict else _MISS


def _bytes(value: Any) -> Any:
    if type(value) is not str:
        return _MISS
    try:
        return _BYTES.validate_python(value)
    except ValidationError:
        return _MISS


class _Miss:
    """A value the fast path does not build: google-genai's own path decides."""


_MISS = _Miss()


def fast_path_holds(cls: type[BaseModel], fields: dict[str, tuple[str, Builder]]) -> bool:
    """True when ``cls`` is as the fast path assumes: every field defaults to None, and every
    field it builds is one of the model's."""
    defaults = _none_defaults(cls)
    return defaults is not None and all(name in defaults for name, _ in fields.values())


def _always_miss(value: Any) -> Any:
    return _MISS


@functools.cache
def _none_defaults(cls: type[BaseModel]) -> dict[str, None] | None:
    """Every field of ``cls`` as None, when each defaults to None (google-genai's models)."""
    model_fields = getattr(cls, "model_fields", None)
    if not isinstance(model_fields, dict) or any(
        f.default is not None for f in model_fields.values()
    ):
        return None
    return dict.fromkeys(model_fields)


def _instance(cls: type[BaseModel], defaults: dict[str, None], given: dict[str, Any]) -> Any:
    """What pydantic's model_construct builds, without its per-call walk over the fields'
    defaults: ``defaults`` holds every field of ``cls`` as None, their default."""
    instance = object.__new__(cls)
    object.__setattr__(instance, "__dict__", {**defaults, **given})
    object.__setattr__(instance, "__pydantic_fields_set__", set(given))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", None)
    return instance


def construct(cls: type[M], **given: Any) -> M:
    """``cls.model_construct(**given)`` for values already valid (built or validated by us)."""
    defaults = _none_defaults(cls)
    if defaults is None or any(name not in defaults for name in given):
        return cls.model_construct(**given)
    return _instance(cls, defaults, given)  # type: ignore[no-any-return]


def _model(cls: type[BaseModel], fields: dict[str, tuple[str, Builder]]) -> Builder:
    """A builder of ``cls`` from a dict whose keys are ``fields`` (by wire or Python name)."""
    defaults = _none_defaults(cls)
    if defaults is None or not fast_path_holds(cls, fields):
        # A google-genai release whose model no longer fits these shortcuts: its own path.
        return _always_miss

    def build(value: Any) -> Any:
        if type(value) is not dict:
            return _MISS
        given: dict[str, Any] = {}
        for key, raw in value.items():
            known = fields.get(key)
            if known is None or raw is None:
                return _MISS
            name, builder = known
            if name in given:
                return _MISS  # the same field under both spellings
            built = builder(raw)
            if built is _MISS:
                return _MISS
            given[name] = built
        return _instance(cls, defaults, given)

    return build


def _spellings(**fields: Builder) -> dict[str, tuple[str, Builder]]:
    out: dict[str, tuple[str, Builder]] = {}
    for name, builder in fields.items():
        out[name] = out[to_camel(name)] = (name, builder)
    return out


_function_call = _model(genai.FunctionCall, _spellings(id=_string, name=_string, args=_mapping))
_function_response = _model(
    genai.FunctionResponse, _spellings(id=_string, name=_string, response=_mapping)
)
_blob = _model(genai.Blob, _spellings(data=_bytes, mime_type=_string, display_name=_string))
_file_data = _model(
    genai.FileData, _spellings(file_uri=_string, mime_type=_string, display_name=_string)
)
_part = _model(
    genai.Part,
    _spellings(
        text=_string,
        thought=_boolean,
        thought_signature=_bytes,
        function_call=_function_call,
        function_response=_function_response,
        inline_data=_blob,
        file_data=_file_data,
    ),
)


def _parts(value: Any) -> Any:
    if type(value) is not list:
        return _MISS
    built = [_part(part) for part in value]
    return _MISS if any(part is _MISS for part in built) else built


_content = _model(genai.Content, _spellings(role=_string, parts=_parts))


def fast_content(value: Any) -> genai.Content | None:
    """The Content google-genai would build from ``value``, or None to let it build it."""
    built = _content(value)
    return None if built is _MISS else built

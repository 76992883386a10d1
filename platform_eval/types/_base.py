"""The base every wire model shares: camelCase on the wire, snake_case in Python.

Two parsing modes exist because the two sources of data deserve different treatment:

* user input (constructors, ``model_validate``) is strict: an unknown key is almost always a
  typo, so it fails with the JSON path of the key;
* server responses (``from_wire``) are lenient: a field the service added after this SDK was
  released must not break parsing, and it is kept so that it survives a round trip.
"""

from __future__ import annotations

import difflib
import functools
import logging
from datetime import UTC, datetime
from typing import Annotated, Any, Self

from google.genai import types as genai_types
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic.alias_generators import to_camel, to_snake

from ._fast_content import fast_content

_logger = logging.getLogger("platform_eval")

#: Validation context key set while parsing data that came from a server.
FROM_SERVER = "platform_eval_from_server"


def is_from_server(info: ValidationInfo) -> bool:
    """True while validating a server response (lenient mode)."""
    return isinstance(info.context, dict) and bool(info.context.get(FROM_SERVER))


class WireModel(BaseModel):
    """Base of all resource and message models."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # "allow" so that unknown server fields are stored and serialized back; user input is
        # still checked for unknown keys by _reject_unknown_keys.
        extra="allow",
        ser_json_bytes="base64",
        # NaN and Infinity are not JSON: a typed field refuses them, and a free-form one keeps
        # them (rather than turning them into null) so that the transport refuses the request.
        allow_inf_nan=False,
        ser_json_inf_nan="constants",
        val_json_bytes="base64",
        use_enum_values=False,
    )

    @classmethod
    def from_wire(cls, data: Any) -> Self:
        """Parses a server response, keeping fields this SDK does not know yet."""
        return cls.model_validate(data, context={FROM_SERVER: True})

    def to_wire(self) -> dict[str, Any]:
        """The camelCase JSON object the service expects (unset fields omitted)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @model_validator(mode="after")
    def _reject_unknown_keys(self, info: ValidationInfo) -> Self:
        # After validation, what pydantic kept as extra is exactly the unknown keys: an
        # attribute read per model, where a before-validator looked at every key of every
        # object (half the cost of building a small model, on every model of every response).
        extra = self.__pydantic_extra__
        if extra and not is_from_server(info):
            cls = type(self)
            raise ValueError("; ".join(_unknown_key_message(cls, key) for key in extra))
        return self


def wire_name(model: type[BaseModel], field: str) -> str:
    """The JSON name the service spells ``model.field`` with (its alias)."""
    info = model.model_fields[field]
    return info.alias or field


def oneof(*fields: str) -> Any:
    """A validator for a proto ``oneof``: user input may set at most one of ``fields``.

    Server responses are not checked (a lenient reader); the emulator reads request bodies as
    user input, so it refuses them with INVALID_ARGUMENT naming the fields, as the service does.
    """
    # Spelled once here: the check runs on every validation of the model.
    wire = {field: to_camel(field) for field in fields}
    names = ", ".join(wire.values())

    def check(self: Any, info: ValidationInfo) -> Any:
        if is_from_server(info):
            return self
        chosen = [wire[field] for field in fields if getattr(self, field) is not None]
        if len(chosen) > 1:
            raise ValueError(
                f"{' and '.join(chosen)} of {type(self).__name__} are alternatives "
                f"(one of {names}): set only one"
            )
        return self

    return model_validator(mode="after")(check)


#: The JSON Schema keyword the discovery documents and OpenAPI use for output-only fields.
READ_ONLY = "readOnly"


def output_only() -> Any:
    """A field only the service sets ("Output only." in the discovery documents): it is read
    from responses; ``is_output_only`` tells it, and the emulator's OpenAPI marks it readOnly."""
    return Field(default=None, json_schema_extra={READ_ONLY: True})


def is_output_only(model: type[BaseModel], field: str) -> bool:
    extra = model.model_fields[field].json_schema_extra
    return isinstance(extra, dict) and extra.get(READ_ONLY) is True


def reserved_name(wire_name: str) -> Any:
    """A field whose proto name Python or pydantic reserves (``model_config``, BaseModel's
    ``schema``): its attribute takes a trailing underscore; the wire and proto names still work."""
    return Field(
        default=None,
        alias=wire_name,
        validation_alias=AliasChoices(wire_name, to_snake(wire_name)),
    )


def _models_in(annotation: Any) -> list[type[WireModel]]:
    if isinstance(annotation, type):
        return [annotation] if issubclass(annotation, WireModel) else []
    return [model for inner in getattr(annotation, "__args__", ()) for model in _models_in(inner)]


@functools.cache
def _output_only_plan(
    model: type[WireModel],
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(the model's output-only fields, its fields whose models have some further down), each
    as (attribute, wire name)."""
    marked: list[tuple[str, str]] = []
    below: list[tuple[str, str]] = []
    _output_only_plan_in_progress.add(model)
    try:
        for name, field in model.model_fields.items():
            if is_output_only(model, name):
                marked.append((name, field.alias or name))
            elif any(
                inner in _output_only_plan_in_progress or any(_output_only_plan(inner))
                for inner in _models_in(field.annotation)
            ):
                below.append((name, field.alias or name))
    finally:
        _output_only_plan_in_progress.discard(model)
    return tuple(marked), tuple(below)


_output_only_plan_in_progress: set[type[WireModel]] = set()


def clear_output_only(value: Any) -> list[str]:
    """Clears, in place, every output-only field a request set (AIP-203: the service ignores
    them) and returns their JSON paths. Only the fields that can lead to one are walked."""
    cleared: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, WireModel):
            marked, below = _output_only_plan(type(node))
            for name, wire in marked:
                if getattr(node, name) is not None:
                    setattr(node, name, None)
                    node.model_fields_set.discard(name)
                    cleared.append(f"{path}.{wire}".lstrip("."))
            for name, wire in below:
                walk(getattr(node, name), f"{path}.{wire}")
        elif isinstance(node, list):
            for index, inner in enumerate(node):
                walk(inner, f"{path}[{index}]")
        elif isinstance(node, dict):
            for key, inner in node.items():
                walk(inner, f"{path}.{key}")

    walk(value, "")
    return cleared


def _unknown_key_message(model: type[BaseModel], key: str) -> str:
    wire_names = sorted(f.alias or n for n, f in model.model_fields.items())
    guess = difflib.get_close_matches(key, wire_names + sorted(model.model_fields), n=1, cutoff=0.6)
    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
    return f"unknown field {key!r} for {model.__name__}{hint}; expected one of {wire_names}"


def _strip_extra_forbidden(value: Any, error: ValidationError) -> tuple[Any, list[str]]:
    """Removes the keys a genai model rejected as unknown; returns the cleaned copy."""
    import copy

    cleaned = copy.deepcopy(value)
    dropped: list[str] = []
    for err in error.errors():
        if err["type"] != "extra_forbidden":
            continue
        *parents, key = err["loc"]
        node: Any = cleaned
        try:
            for step in parents:
                node = node[step]
            del node[key]
            dropped.append(".".join(str(p) for p in err["loc"]))
        except (KeyError, IndexError, TypeError):
            continue
    return cleaned, dropped


def _lenient_genai(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    # google-genai's models forbid unknown keys. A newer service may send Part fields the
    # installed google-genai does not know; in server responses those are dropped (with a
    # warning) rather than failing the whole response.
    try:
        return handler(value)
    except ValidationError as error:
        if not is_from_server(info) or not isinstance(value, dict):
            raise
        cleaned, dropped = _strip_extra_forbidden(value, error)
        if not dropped:
            raise
        _logger.warning(
            "Ignoring fields unknown to the installed google-genai in a server response: %s",
            ", ".join(dropped),
        )
        return handler(cleaned)


def _content(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    # Agent data is mostly Content: its common shapes are built without google-genai's
    # per-part validation (the same objects, see _fast_content); the rest takes its path.
    if type(value) is dict:
        built = fast_content(value)
        if built is not None:
            return built
    return _lenient_genai(value, handler, info)


Content = Annotated[genai_types.Content, WrapValidator(_content)]


def rfc3339(value: datetime) -> str:
    """A timestamp as the service writes one (proto3 JSON): in UTC with ``Z``, and 0, 3 or 6
    fractional digits, the fewest that keep it exact. A time without a zone is taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    micro = value.microsecond
    if micro == 0:
        fraction = ""
    elif micro % 1000 == 0:
        fraction = f".{micro // 1000:03d}"
    else:
        fraction = f".{micro:06d}"
    return f"{value:%Y-%m-%dT%H:%M:%S}{fraction}Z"


#: A google.protobuf.Timestamp field: read in any RFC 3339 offset, written in UTC ``Z``.
Timestamp = Annotated[datetime, PlainSerializer(rfc3339, when_used="json")]
Tool = Annotated[genai_types.Tool, WrapValidator(_lenient_genai)]
Schema = Annotated[genai_types.Schema, WrapValidator(_lenient_genai)]

"""Small messages several resources share: encryption, output destinations, Cloud Logging."""

from __future__ import annotations

from ._base import WireModel


class EncryptionSpec(WireModel):
    """A customer-managed encryption key (CMEK) for a set, run or metric."""

    kms_key_name: str | None = None


class BigQueryDestination(WireModel):
    output_uri: str | None = None


class GcsDestination(WireModel):
    output_uri_prefix: str | None = None


class TracingContext(WireModel):
    """``CloudLoggingConfig.TracingContext``: the trace the exported results belong to."""

    conversation_id: str | None = None
    span_id: str | None = None
    trace_id: str | None = None


class CloudLoggingConfig(WireModel):
    """Where a run exports its results to Cloud Logging."""

    project: str | None = None
    resource_labels: dict[str, str] | None = None
    resource_type: str | None = None
    tracing_context: TracingContext | None = None

"""EvaluationSet: a named, ordered collection of evaluation items."""

from __future__ import annotations

from typing import Any

from ._base import Timestamp, WireModel, output_only
from .agent_data import AgentConfig
from .common import EncryptionSpec, GcsDestination


class HarborDataset(WireModel):
    gcs_uri: str | None = None


class EvaluationSet(WireModel):
    name: str | None = None
    display_name: str | None = None
    evaluation_items: list[str] | None = None
    create_time: Timestamp | None = output_only()
    update_time: Timestamp | None = output_only()
    metadata: Any = None
    #: The static configuration of each agent the items' AgentData names, by agent id.
    agent_configs: dict[str, AgentConfig] | None = None
    encryption_spec: EncryptionSpec | None = None
    #: Output only: set when the items were imported from a Harbor dataset.
    harbor_dataset: HarborDataset | None = output_only()

    @property
    def id(self) -> str | None:
        return self.name.rsplit("/", 1)[-1] if self.name else None


class ImportSchemaConfig(WireModel):
    """``ImportEvaluationSetRequest.ImportSchemaConfig``: what the source's bytes are."""

    #: ``JSONL`` (one EvaluationItem per line), ``OTEL_JSON`` or ``OTEL_PROTO``.
    data_format: str | None = None
    data_format_version: str | None = None


class ImportInlineSource(WireModel):
    """``ImportEvaluationSetRequest.InlineSource``: the data in the request (under 4 MB)."""

    content: bytes | None = None
    import_schema_config: ImportSchemaConfig | None = None


class ImportGcsSource(WireModel):
    """``ImportEvaluationSetRequest.GcsSource``: the data in a Cloud Storage object."""

    gcs_uri: str | None = None
    import_schema_config: ImportSchemaConfig | None = None


class ImportEvaluationSetRequest(WireModel):
    """The body of ``evaluationSets:import``: a new set and the one source of its items."""

    evaluation_set: EvaluationSet | None = None
    gcs_destination: GcsDestination | None = None
    inline_source: ImportInlineSource | None = None
    gcs_source: ImportGcsSource | None = None
    # The sources the emulator does not read, kept as sent (Cloud Trace, Agent Engine, ...).
    bigquery_source: dict[str, Any] | None = None
    cloud_trace_source: dict[str, Any] | None = None
    agent_engine_source: dict[str, Any] | None = None
    interactions_source: dict[str, Any] | None = None
    harbor_dataset: dict[str, Any] | None = None
    import_mode: str | None = None

    def sources(self) -> list[str]:
        """The wire names of the sources set (the API wants exactly one)."""
        fields = type(self).model_fields
        return [
            fields[field].alias or field
            for field in fields
            if field.endswith(("_source", "_dataset")) and getattr(self, field) is not None
        ]


class EvaluationExperiment(WireModel):
    """A group of runs to compare (the official client makes one before each run)."""

    name: str | None = None
    display_name: str | None = None
    evaluation_runs: list[str] | None = None
    labels: dict[str, str] | None = None
    metadata: Any = None
    #: Sent by the official client, though not in the discovery documents of 2026-11-06.
    merge_strategy: str | None = None
    create_time: Timestamp | None = output_only()
    update_time: Timestamp | None = output_only()

    @property
    def id(self) -> str | None:
        return self.name.rsplit("/", 1)[-1] if self.name else None

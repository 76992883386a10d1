"""The location's own evaluation methods: ``:evaluateInstances``, ``:evaluateDataset``,
``:generateInstanceRubrics``, ``:generateUserScenarios`` and ``:generateLossClusters``.

Each is computed by the same engine and judges as a run (``metrics``; every model call through
the judge seam), in a worker thread: a judge call waits on the network, never on the server's
event loop.
"""

from __future__ import annotations

import json
from typing import Any

from anyio import to_thread
from starlette.responses import JSONResponse, Response

from .. import metrics
from .._names import ITEMS, SETS
from ..metrics._invocations import content_text
from ..metrics.instances import UnimplementedError, evaluate_instances
from ..metrics.judges import Judges
from ..metrics.rubric_generation import write_rubrics
from ..metrics.scenario_generation import write_scenarios
from ..types import (
    EvaluationItem,
    EvaluationItemType,
    EvaluationResult,
    GenerateLossClustersRequest,
    GenerateUserScenariosRequest,
    MetricConfig,
    Rubric,
    UserScenario,
)
from ..types.instances import (
    EvaluateDatasetRequest,
    EvaluateInstancesRequest,
    GenerateInstanceRubricsRequest,
    GenerateInstanceRubricsResponse,
    GenerateUserScenariosResponse,
)
from . import dataset_evaluation, loss_analysis
from .backend import (
    ApiError,
    Backend,
    now_rfc3339,
    parse_body,
    project_of,
    split_name,
    type_url,
)
from .bodies import parse_json_object, read_body
from .dataset_evaluation import read_rows
from .gcs import ObjectStore, parse_gs_uri
from .limits import Limits
from .routes import LOCATION, Call, Method

#: The methods, as the discovery documents name their verbs.
VERBS = (
    "evaluateInstances",
    "evaluateDataset",
    "generateInstanceRubrics",
    "generateUserScenarios",
    "generateLossClusters",
)


class LocationMethods:
    def __init__(
        self, backend: Backend, judges: Judges, limits: Limits, objects: ObjectStore
    ) -> None:
        self.backend = backend
        self.objects = objects
        self.judges = judges
        self.limits = limits

    def methods(self) -> list[Method]:
        handlers = {
            "evaluateInstances": self.evaluate_instances,
            "generateInstanceRubrics": self.generate_instance_rubrics,
            "generateLossClusters": self.generate_loss_clusters,
            "generateUserScenarios": self.generate_user_scenarios,
            "evaluateDataset": self.evaluate_dataset,
        }
        return [Method("POST", LOCATION, f":{verb}", handlers[verb]) for verb in VERBS]

    async def _body(self, call: Call) -> dict[str, Any]:
        raw = await read_body(call.request, self.limits.body_bytes)
        return parse_json_object(raw, limits=self.limits)

    async def evaluate_instances(self, call: Call) -> Response:
        body = await self._body(call)

        def parse(form: dict[str, Any]) -> EvaluateInstancesRequest:
            return parse_body(EvaluateInstancesRequest, form, call.version)

        def registered(name: str) -> MetricConfig:
            return self._registered_metric(call, name)

        def evaluate() -> dict[str, Any]:
            return evaluate_instances(body, self.judges, parse=parse, registered=registered)

        try:
            answer = await to_thread.run_sync(evaluate)
        except UnimplementedError as exc:
            raise ApiError("UNIMPLEMENTED", str(exc)) from None
        except metrics.MetricError as exc:
            raise ApiError("INVALID_ARGUMENT", str(exc)) from None
        return JSONResponse(answer)

    async def generate_instance_rubrics(self, call: Call) -> Response:
        request = parse_body(GenerateInstanceRubricsRequest, await self._body(call), call.version)
        if not request.contents:
            raise ApiError(
                "INVALID_ARGUMENT", "contents: the prompt to write rubrics for is required"
            )
        prompt = "\n\n".join(content_text(content) for content in request.contents)
        if request.agent_config:
            prompt += "\n\nThe agent that answers it:\n" + json.dumps(request.agent_config)
        predefined = request.predefined_rubric_generation_spec
        own = request.rubric_generation_spec
        if request.metric_resource_name:
            llm = self._registered_metric(call, request.metric_resource_name).llm_based_metric_spec
            predefined = predefined or (llm.predefined_rubric_generation_spec if llm else None)
            own = own or (llm.rubric_generation_spec if llm else None)
        model_config = own.model_config_ if own else None

        def write() -> list[Rubric]:
            return write_rubrics(
                self.judges,
                prompt,
                metric=predefined.metric_spec_name if predefined else None,
                template=own.prompt_template if own else None,
                model=model_config.autorater_model if model_config else None,
                types=(own.rubric_type_ontology or []) if own else [],
            )

        try:
            rubrics = await to_thread.run_sync(write)
        except metrics.MetricError as exc:
            raise ApiError("INVALID_ARGUMENT", str(exc)) from None
        return JSONResponse(GenerateInstanceRubricsResponse(generated_rubrics=rubrics).to_wire())

    async def generate_loss_clusters(self, call: Call) -> Response:
        # Inline results are what the SDK has (no evaluationRequest name): not held to what a
        # stored result requires.
        body = await self._body(call)
        request = parse_body(GenerateLossClustersRequest, body, call.version, required=False)
        if not request.configs:
            raise ApiError("INVALID_ARGUMENT", "configs: at least one LossAnalysisConfig")
        for index, config in enumerate(request.configs):
            if not config.metric:
                raise ApiError(
                    "INVALID_ARGUMENT", f"configs[{index}].metric: the metric to analyse"
                )
        inline = request.inline_results.evaluation_results if request.inline_results else None
        if bool(inline) == bool(request.evaluation_set):
            raise ApiError(
                "INVALID_ARGUMENT",
                "give the results to analyse as inlineResults or as an evaluationSet, one of them",
            )
        sources: list[tuple[str | None, EvaluationResult]] = (
            [(None, result) for result in inline or []]
            if inline
            else self._set_results(call, request.evaluation_set or "")
        )

        def analyse() -> list[dict[str, Any]]:
            return loss_analysis.analyse(self.judges, request.configs or [], sources)

        try:
            analysed = await to_thread.run_sync(analyse)
        except metrics.MetricError as exc:
            raise ApiError("INVALID_ARGUMENT", str(exc)) from None
        response = {
            "@type": type_url(call.version, "GenerateLossClustersResponse"),
            "analysisTime": now_rfc3339(),
            "results": analysed,
        }
        owner = call.parent or "projects/-/locations/global"
        metadata = type_url(call.version, "GenericOperationMetadata")
        return JSONResponse(
            self.backend.finished_operation(owner, metadata=metadata, response=response)
        )

    def _set_results(self, call: Call, name: str) -> list[tuple[str | None, EvaluationResult]]:
        """The results of a set's RESULT items, each with its item's name."""
        where = "evaluationSet"
        try:
            parent, rid = split_name(name, SETS)
        except ApiError:
            raise ApiError("INVALID_ARGUMENT", f"{where}: {name!r} is not a set name") from None
        stored = self.backend.store.get(parent, SETS, rid)
        if stored is None:
            raise ApiError("NOT_FOUND", f"{where}: {name} not found")
        found: list[tuple[str | None, EvaluationResult]] = []
        for item_name in stored.get("evaluationItems") or []:
            item = EvaluationItem.from_wire(self.backend.get_by_name(item_name, ITEMS))
            if item.evaluation_item_type != EvaluationItemType.RESULT:
                continue
            response = item.evaluation_response
            if response is None and item.gcs_uri:
                payload = self.objects.read_json(item.gcs_uri, project_of(item_name))
                response = EvaluationResult.from_wire(payload)
            if response is not None:
                found.append((item_name, response))
        return found

    async def generate_user_scenarios(self, call: Call) -> Response:
        request = parse_body(GenerateUserScenariosRequest, await self._body(call), call.version)
        config = request.user_scenario_generation_config
        if config is None or config.user_scenario_count is None:
            raise ApiError(
                "INVALID_ARGUMENT",
                "userScenarioGenerationConfig.userScenarioCount: how many scenarios to write",
            )
        if request.gemini_agent_config is not None:
            raise ApiError(
                "UNIMPLEMENTED",
                "geminiAgentConfig: the emulator has no Gemini Agents to read; send the agents",
            )
        agents = request.agents or {}
        if not agents:
            raise ApiError("INVALID_ARGUMENT", "agents: the agents to write scenarios for")
        if request.root_agent_id not in agents:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"rootAgentId: {request.root_agent_id!r} is not one of the agents {sorted(agents)}",
            )
        count = config.user_scenario_count

        def write() -> list[UserScenario]:
            return write_scenarios(
                self.judges,
                agents,
                root=request.root_agent_id,
                count=count,
                instruction=config.simulation_instruction,
                environment=config.environment_data,
                model=config.model_name,
            )

        try:
            scenarios = await to_thread.run_sync(write)
        except metrics.MetricError as exc:
            raise ApiError("INVALID_ARGUMENT", str(exc)) from None
        return JSONResponse(GenerateUserScenariosResponse(user_scenarios=scenarios).to_wire())

    async def evaluate_dataset(self, call: Call) -> Response:
        request = parse_body(EvaluateDatasetRequest, await self._body(call), call.version)
        dataset = request.dataset
        if dataset is not None and dataset.bigquery_source is not None:
            raise ApiError(
                "UNIMPLEMENTED",
                "dataset.bigquerySource: the emulator has no BigQuery; give a gcsSource",
            )
        uris = dataset.gcs_source.uris if dataset and dataset.gcs_source else None
        if not uris or len(uris) != 1:
            raise ApiError("INVALID_ARGUMENT", "dataset.gcsSource.uris: one Cloud Storage object")
        destination = request.output_config.gcs_destination if request.output_config else None
        prefix = destination.output_uri_prefix if destination else None
        if not prefix:
            raise ApiError(
                "INVALID_ARGUMENT", "outputConfig.gcsDestination.outputUriPrefix: where to write"
            )
        if not request.metrics:
            raise ApiError("INVALID_ARGUMENT", "metrics: at least one metric")
        project = project_of(call.parent) if call.parent else ""
        rows = read_rows(self.objects, uris[0], project)
        configs = request.metrics

        def evaluate() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            return dataset_evaluation.evaluate_dataset(
                rows, configs, self.judges, request.autorater_config
            )

        lines, aggregated = await to_thread.run_sync(evaluate)
        directory = prefix.rstrip("/")
        bucket, name = parse_gs_uri(f"{directory}/evaluation_results.jsonl")
        self.objects.claim(bucket, project)
        text = "".join(json.dumps(line) + "\n" for line in lines)
        self.objects.put(bucket, name, text.encode(), "application/jsonl")
        output = {"dataset": dataset.to_wire() if dataset else {}, "aggregationResults": aggregated}
        self.objects.write_json(f"{directory}/aggregation_results.json", output, project)
        response = {
            "@type": type_url(call.version, "EvaluateDatasetResponse"),
            "aggregationOutput": output,
            "outputInfo": {"gcsOutputDirectory": directory},
        }
        metadata = type_url(call.version, "GenericOperationMetadata")
        owner = call.parent or "projects/-/locations/global"
        return JSONResponse(
            self.backend.finished_operation(owner, metadata=metadata, response=response)
        )

    def _registered_metric(self, call: Call, name: str) -> MetricConfig:
        where = "metricSources[].metricResourceName"
        registered = self.backend.registered_metric(name, where, call.parent).metric
        if registered is None:
            raise ApiError("INVALID_ARGUMENT", f"{where}: {name} has no metric configuration")
        return registered

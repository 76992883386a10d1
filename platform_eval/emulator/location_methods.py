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
from .._names import METRICS
from ..metrics._invocations import content_text
from ..metrics.instances import UnimplementedError, evaluate_instances
from ..metrics.judges import Judges
from ..metrics.rubric_generation import write_rubrics
from ..types import EvaluationMetric, MetricConfig, Rubric
from ..types.instances import EvaluateInstancesRequest, GenerateInstanceRubricsRequest
from .backend import ApiError, Backend, parse_body, split_name
from .bodies import parse_json_object, read_body
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
    def __init__(self, backend: Backend, judges: Judges, limits: Limits) -> None:
        self.backend = backend
        self.judges = judges
        self.limits = limits

    def methods(self) -> list[Method]:
        handlers = {
            "evaluateInstances": self.evaluate_instances,
            "generateInstanceRubrics": self.generate_instance_rubrics,
        }
        return [
            Method("POST", LOCATION, f":{verb}", handlers.get(verb, self.not_yet)) for verb in VERBS
        ]

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
        return JSONResponse({"generatedRubrics": [rubric.to_wire() for rubric in rubrics]})

    def _registered_metric(self, call: Call, name: str) -> MetricConfig:
        where = "metricSources[].metricResourceName"
        try:
            parent, rid = split_name(name, METRICS)
        except ApiError:
            raise ApiError(
                "INVALID_ARGUMENT", f"{where}: {name!r} is not an EvaluationMetric name"
            ) from None
        if call.parent and parent != call.parent:
            raise ApiError("INVALID_ARGUMENT", f"{where}: {name} is not in {call.parent}")
        body = self.backend.store.get(parent, METRICS, rid)
        if body is None:
            raise ApiError("NOT_FOUND", f"{where}: {name} not found")
        registered = EvaluationMetric.from_wire(body).metric
        if registered is None:
            raise ApiError("INVALID_ARGUMENT", f"{where}: {name} has no metric configuration")
        return registered

    async def not_yet(self, call: Call) -> Response:
        raise ApiError(
            "UNIMPLEMENTED",
            f":{call.verb} is not served by the emulator yet; run against a project for it",
        )

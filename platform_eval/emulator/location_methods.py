"""The location's own evaluation methods: ``:evaluateInstances``, ``:evaluateDataset``,
``:generateInstanceRubrics``, ``:generateUserScenarios`` and ``:generateLossClusters``.

Each is computed by the same engine and judges as a run (``metrics``; every model call through
the judge seam), in a worker thread: a judge call waits on the network, never on the server's
event loop.
"""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from starlette.responses import JSONResponse, Response

from .. import metrics
from .._names import METRICS
from ..metrics.instances import UnimplementedError, evaluate_instances
from ..metrics.judges import Judges
from ..types import EvaluationMetric, MetricConfig
from ..types.instances import EvaluateInstancesRequest
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

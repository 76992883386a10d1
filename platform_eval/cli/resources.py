"""``items``, ``sets``, ``runs`` (list, get, delete, cancel) and ``metrics list``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import metrics
from ..metrics import service_only
from ..target import Target
from ._common import EXIT_OK

_METHODS = {
    "items": ("list_items", "get_item", "delete_item"),
    "sets": ("list_sets", "get_set", "delete_set"),
    "runs": ("list_runs", "get_run", "delete_run"),
}


def _line(resource: Any) -> str:
    wire = resource.to_wire()
    extra = wire.get("state") or wire.get("evaluationItemType") or ""
    return "\t".join(str(v) for v in (wire.get("name", ""), wire.get("displayName", ""), extra))


def resource_command(args: argparse.Namespace, target: Target) -> int:
    client = target.client
    list_method, get_method, delete_method = _METHODS[args.collection]
    if args.action == "list":
        pager = getattr(client, list_method)(filter=args.filter, page_size=args.page_size)
        for count, resource in enumerate(pager, start=1):
            print(json.dumps(resource.to_wire()) if args.json else _line(resource))
            if args.limit and count >= args.limit:
                break
    elif args.action == "get":
        print(json.dumps(getattr(client, get_method)(args.name).to_wire(), indent=2))
    elif args.action == "delete":
        getattr(client, delete_method)(args.name)
        print(f"deleted {args.name}")
    elif args.action == "cancel":
        client.cancel_run(args.name)
        print(f"cancel requested for {args.name}")
    return EXIT_OK


def metrics_list(args: argparse.Namespace) -> int:
    infos = list(metrics.REGISTRY.values())

    def targets(info: metrics.MetricInfo) -> str:
        if service_only.reason(info.name) is not None:
            return "service"
        return "emulator" + (", service" if info.service_defined else "")

    if args.json:
        listed = [
            {
                "metric": info.name,
                "reads": list(info.reads),
                "judge": info.needs_judge,
                "targets": targets(info),
                "range": list(info.score_range),
                "higherIsBetter": info.higher_is_better,
                "about": info.description,
            }
            for info in infos
        ]
        print(json.dumps(listed, indent=2))
        return EXIT_OK
    width = max(len(info.name) for info in infos)
    wide = max(len(",".join(info.reads)) for info in infos)
    print(
        f"{'metric':{width}}  {'reads':{wide}}  {'judge':5}  {'computed by':17}  {'range':10}  "
        "about"
    )
    for info in infos:
        reads, judge = ",".join(info.reads), "judge" if info.needs_judge else "-"
        low, high = info.score_range
        scale = f"{low:g}-{high:g} {'^' if info.higher_is_better else 'v'}"
        print(
            f"{info.name:{width}}  {reads:{wide}}  {judge:5}  {targets(info):17}  {scale:10}  "
            f"{info.description}"
        )
    return EXIT_OK

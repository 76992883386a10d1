"""Local eval data in and out: pure functions, no network.

* ``load`` / ``detect`` / ``validate``: any supported file, its kind, every problem in one pass;
* ``load_eval_set`` (ADK EvalSet and both older ``.test.json`` shapes), ``load_dataset``
  (EvaluationDataset), ``load_eval_config`` (ADK criteria JSON, agents-cli YAML);
* ``eval_set_to_items``: eval cases as REQUEST evaluation items, with a report;
* ``migrate_file`` / ``migrate_directory`` / ``unmigrate_file``: EvalSet <-> EvaluationDataset.
"""

from ._problems import FormatError, Problem
from .adk import EvalCase, EvalSet, Invocation
from .config import Criterion, EvalConfig, parse_eval_config
from .convert import ConversionReport, case_to_item, case_to_request, eval_set_to_items
from .dataset import DatasetCase, EvaluationDataset
from .from_dataset import dataset_to_eval_set
from .load import (
    TRACE_KINDS,
    Kind,
    LoadedFile,
    detect,
    load,
    load_dataset,
    load_eval_config,
    load_eval_set,
    read_data,
    validate,
    validate_loaded,
)
from .migrate import (
    MigrationReport,
    eval_set_to_dataset,
    migrate_directory,
    migrate_file,
    unmigrate_file,
)

__all__ = [
    "TRACE_KINDS",
    "ConversionReport",
    "Criterion",
    "DatasetCase",
    "EvalCase",
    "EvalConfig",
    "EvalSet",
    "EvaluationDataset",
    "FormatError",
    "Invocation",
    "Kind",
    "LoadedFile",
    "MigrationReport",
    "Problem",
    "case_to_item",
    "case_to_request",
    "dataset_to_eval_set",
    "detect",
    "eval_set_to_dataset",
    "eval_set_to_items",
    "load",
    "load_dataset",
    "load_eval_config",
    "load_eval_set",
    "migrate_directory",
    "migrate_file",
    "parse_eval_config",
    "read_data",
    "unmigrate_file",
    "validate",
    "validate_loaded",
]

"""EvaluationRun.inferenceConfigs: how the service produces the responses it then evaluates.

A run in inference mode sends each request's prompt to a model, an agent or a Harbor coding
agent, per candidate name. The emulator stores these configs; it does not run inference.
"""

from __future__ import annotations

from typing import Any

from ._base import Content, Tool, WireModel, oneof, reserved_name
from .agent_data import AgentConfig
from .common import BigQueryDestination, GcsDestination
from .generation import GenerationConfig


class InferenceAgentConfig(WireModel):
    """An agent described inline: its instruction and tools."""

    developer_instruction: Content | None = None
    tools: list[Tool] | None = None


class DataAgentConfig(WireModel):
    data_agent: str | None = None


class DiscoveryEngineAssistantConfig(WireModel):
    assistant: str | None = None


class GeminiAgentConfig(WireModel):
    gemini_agent: str | None = None


class SessionInput(WireModel):
    """The session an agent run starts in."""

    user_id: str | None = None
    parameters: dict[str, str] | None = None
    session_state: dict[str, Any] | None = None


class UserSimulatorConfig(WireModel):
    """A model that writes the user's next message, for multi-turn runs."""

    model_name: str | None = None
    model_config_: GenerationConfig | None = reserved_name("modelConfig")
    max_turn: int | None = None


class AgentRunConfig(WireModel):
    """A deployed agent to run: an Agent Engine, a data agent, an assistant or a Gemini agent."""

    agent_engine: str | None = None
    data_agent_config: DataAgentConfig | None = None
    discovery_engine_assistant_config: DiscoveryEngineAssistantConfig | None = None
    gemini_agent_config: GeminiAgentConfig | None = None
    session_input: SessionInput | None = None
    user_simulator_config: UserSimulatorConfig | None = None


class NetworkSpec(WireModel):
    enable_internet_access: bool | None = None
    network: str | None = None
    subnetwork: str | None = None


class BatchJobConfig(WireModel):
    network_spec: NetworkSpec | None = None


class CodingAgent(WireModel):
    agent: str | None = None
    agent_model: str | None = None
    agent_model_config: GenerationConfig | None = None


class HarborRunConfig(WireModel):
    """A coding agent run on a Harbor dataset in a sandboxed batch job."""

    coding_agent: CodingAgent | None = None
    batch_job_config: BatchJobConfig | None = None


class PromptTemplate(WireModel):
    """A prompt template, inline or in Cloud Storage."""

    prompt_template: str | None = None
    gcs_uri: str | None = None

    _one_source = oneof("prompt_template", "gcs_uri")


class RawAgentTrajectoryDestination(WireModel):
    """Where the agent traces of an inference run are written as produced."""

    gcs_destination: GcsDestination | None = None
    bigquery_destination: BigQueryDestination | None = None

    _one_destination = oneof("gcs_destination", "bigquery_destination")


class InferenceConfig(WireModel):
    """``EvaluationRun.InferenceConfig``: the model or agent that answers a candidate's
    requests."""

    model: str | None = None
    generation_config: GenerationConfig | None = None
    agent_config: InferenceAgentConfig | None = None
    agent_run_config: AgentRunConfig | None = None
    agents: dict[str, AgentConfig] | None = None
    harbor_run_config: HarborRunConfig | None = None
    prompt_template: PromptTemplate | None = None
    parallelism: int | None = None
    raw_agent_trajectory_destination: RawAgentTrajectoryDestination | None = None

    def inference_field(self) -> str | None:
        """The wire name of the first field that has the run produce responses itself (a
        model, an inline agent, a deployed agent, a Harbor run), or None: ``agents`` alone
        only describes the agents whose recorded responses are evaluated."""
        for attribute, wire in (
            ("model", "model"),
            ("agent_config", "agentConfig"),
            ("agent_run_config", "agentRunConfig"),
            ("harbor_run_config", "harborRunConfig"),
        ):
            if getattr(self, attribute) is not None:
                return wire
        return None

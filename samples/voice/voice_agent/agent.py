"""A voice agent: it answers in speech on a Gemini Live model, and looks up the weather."""

import os

from google.adk.agents import Agent


def get_weather(city: str) -> dict[str, str]:
    """Today's weather in a city."""
    return {"city": city, "sky": "sunny"}


root_agent = Agent(
    name="voice_agent",
    # A Live model of the Gemini API; PLATFORM_EVAL_SAMPLE_LIVE_MODEL names another.
    model=os.environ.get("PLATFORM_EVAL_SAMPLE_LIVE_MODEL", "gemini-live-2.5-flash-preview"),
    instruction="You are a friendly voice assistant. Answer in one short sentence.",
    tools=[get_weather],
)

"""A small ADK agent with tools and session state: what `platform-eval run --agent` runs in
samples/run_agent.py, the tests and the benchmarks.

Its model is Gemini through google-genai (GOOGLE_API_KEY, or Vertex AI with
GOOGLE_GENAI_USE_VERTEXAI); the tests point google-genai at a fake Gemini server on loopback
(GOOGLE_GEMINI_BASE_URL) that answers by tests/agent_script.py.
"""

from google.adk.agents import Agent
from google.adk.tools.tool_context import ToolContext

FORECASTS = {"paris": "sunny", "rome": "warm and dry", "oslo": "snowing"}


def get_weather(city: str) -> dict:
    """Returns today's forecast for a city."""
    return {"city": city, "forecast": FORECASTS.get(city.lower(), "unknown")}


def book_hotel(city: str, nights: int, tool_context: ToolContext) -> dict:
    """Books a hotel in a city for a number of nights."""
    if city.lower() == "atlantis":
        raise RuntimeError("no hotels in Atlantis")
    confirmation = f"{city[:3].upper()}-{nights}"
    tool_context.state["booking"] = {"city": city, "nights": nights, "confirmation": confirmation}
    return {"status": "booked", "confirmation": confirmation}


root_agent = Agent(
    name="travel_agent",
    model="gemini-2.5-flash",
    instruction="You help travellers plan trips. The traveller's name is {user_name?}.",
    tools=[get_weather, book_hotel],
)

"""A small ADK agent with tools and session state, for the tests that run an agent.

Its model is whatever google-genai reaches: in the tests, the fake Gemini server on loopback
(GOOGLE_GEMINI_BASE_URL), answering by tests/agent_script.py.
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

"""A multi-agent app as a new user writes one (issue 60, item 4): a helpdesk root that
transfers to two sub-agents and calls a third agent as a tool (AgentTool), its instruction
templated on the session's ``{user_tier}``, a tool that reads the state and one that writes it;
and how the fake model answers it, scripted per agent (by its system instruction)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fake_gemini import Seen, adk_judge_rule

AGENT = '''
from google.adk.agents import Agent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.tool_context import ToolContext

MODEL = "gemini-2.5-flash"


def lookup_invoice(invoice_id: str, tool_context: ToolContext) -> dict:
    """Looks up an invoice of the user's."""
    return {"invoice_id": invoice_id, "amount": 42, "tier": tool_context.state.get("user_tier")}


def reset_password(user: str, tool_context: ToolContext) -> dict:
    """Resets the user's password."""
    tool_context.state["password_reset"] = True
    return {"user": user, "reset": True}


summarizer = Agent(
    name="summarizer", model=MODEL, description="Summarizes a text.",
    instruction="Summarize the text in one line.",
)
billing_agent = Agent(
    name="billing_agent", model=MODEL, description="Answers questions about invoices.",
    instruction="You answer billing questions for {user_tier} customers.",
    tools=[lookup_invoice],
)
account_agent = Agent(
    name="account_agent", model=MODEL, description="Helps with account access.",
    instruction="You help customers get back into their accounts.",
    tools=[reset_password],
)
root_agent = Agent(
    name="helpdesk", model=MODEL, description="The IT helpdesk.",
    instruction="Route the {user_tier} customer to the agent that can help.",
    sub_agents=[billing_agent, account_agent],
    tools=[AgentTool(summarizer)],
)
'''

CASES = {
    "eval_set_id": "helpdesk",
    "eval_cases": [
        {
            "eval_id": eval_id,
            "session_input": {"app_name": "helpdesk", "user_id": "u", "state": {"user_tier": "gold"}},
            "conversation": [
                {
                    "invocation_id": "t1",
                    "user_content": {"role": "user", "parts": [{"text": question}]},
                    "final_response": {"role": "model", "parts": [{"text": answer}]},
                }
            ],
        }
        for eval_id, question, answer in (
            ("invoice", "What is on invoice INV-7?", "Invoice INV-7 is 42."),
            ("password", "I forgot my password", "Your password was reset."),
            ("summary", "Summarize: the printer is jammed again", "Summary: printer jammed."),
        )
    ],
}  # fmt: skip


def write(folder: Path) -> Path:
    """The app as an agents folder (``folder/helpdesk``) and its eval set; the set's path."""
    app = folder / "helpdesk"
    app.mkdir(parents=True, exist_ok=True)
    (app / "__init__.py").write_text("from . import agent\n")
    (app / "agent.py").write_text(AGENT)
    import json

    (folder / "helpdesk.evalset.json").write_text(json.dumps(CASES))
    return folder / "helpdesk.evalset.json"


def _system(seen: Seen) -> str:
    parts = (seen.body.get("systemInstruction") or {}).get("parts") or []
    return "\n".join(p.get("text", "") for p in parts)


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]}


def _user_text(seen: Seen) -> str:
    texts = [
        p.get("text", "")
        for c in seen.body.get("contents") or []
        if c.get("role") == "user"
        for p in c.get("parts") or []
    ]
    return " ".join(texts)


def _answered(seen: Seen) -> dict[str, Any] | None:
    last = (seen.body.get("contents") or [{}])[-1]
    responses = [p["functionResponse"] for p in last.get("parts") or [] if "functionResponse" in p]
    return responses[-1] if responses else None


def rule(seen: Seen) -> str | dict[str, Any]:
    """Each agent's model, told apart by its instruction; anything else a judge."""
    system, said, answered = _system(seen), _user_text(seen), _answered(seen)
    if "Summarize the text" in system:
        return "Summary: printer jammed."
    if "billing questions" in system:
        if answered is not None:
            return f"Invoice INV-7 is {answered['response'].get('amount')}."
        return _call("lookup_invoice", {"invoice_id": "INV-7"})
    if "back into their accounts" in system:
        if answered is not None:
            return "Your password was reset."
        return _call("reset_password", {"user": "u"})
    if "Route the" in system:
        if answered is not None and answered.get("name") == "summarizer":
            return str(answered["response"].get("result") or "Summary: printer jammed.")
        if "invoice" in said.lower():
            return _call("transfer_to_agent", {"agent_name": "billing_agent"})
        if "password" in said.lower():
            return _call("transfer_to_agent", {"agent_name": "account_agent"})
        return _call("summarizer", {"request": "the printer is jammed again"})
    return adk_judge_rule(seen)

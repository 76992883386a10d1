from . import agent  # noqa: F401  (as adk create lays out an agent folder)

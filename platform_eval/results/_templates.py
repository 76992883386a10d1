"""Every HTML page of the results (the run report, compare, failure analysis, judge agreement)
renders through here: a Jinja2 template of ``templates/`` with autoescaping, so that every value
is text, never markup, and the control characters of user text are written out."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ._safe_text import no_bidi, printable

if TYPE_CHECKING:
    import jinja2


def _printable(value: Any) -> Any:
    """User text with its control characters written out; the template's own markup kept."""
    import markupsafe

    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return printable(value)
    return value


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("platform_eval.results", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        # Control characters of user text (a terminal escape, a bidi override) written out.
        finalize=_printable,
    )


def render(template: str, **values: Any) -> str:
    """A page of ``templates/``, every value escaped and its control characters written out."""
    # A bidi override in a case id or an answer would reverse the page's text around it:
    # written out, the whole document over (an entity would still be obeyed).
    return no_bidi(_environment().get_template(template).render(**values) + "\n")

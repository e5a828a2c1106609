"""Placeholder values: text that stands in for a value instead of giving one.

One rule for everything phasegate asks a person or an agent to fill in: a task input's
answer and default (:mod:`phasegate.planning.answers`, :mod:`phasegate.phases.inputs`), a
value filled into ``{{ id }}`` (:mod:`phasegate.phases.placeholders`, which are a different
thing: the slots in a prompt), and every string of an output phase's JSON answer (the gate's
``placeholder_value`` issue, :mod:`phasegate.validators.output`). A value refused in one of
them is refused in all of them.

A placeholder value is, ignoring case and surrounding spaces:

- a whole stand-in: ``TBD``, ``TODO``, ``TBA``, ``FIXME``, ``N/A`` (or ``NA``), ``XXX``,
  ``placeholder``, question marks only, three or more dots or ``…``, or one
  ``<angle-bracketed>`` name such as ``<your name>``;
- or text that starts with ``TODO:``, ``TBD:`` or ``FIXME:`` (any case), or with the word
  ``TODO``, ``TBD`` or ``FIXME`` in capitals (``TBD later``).

File names and prose that merely start like one are values: ``TODO.md``, ``todo.py``,
``Todo list fixed``, ``a <b> tag``, ``tbd-service``.

As an *answer* (an input's value, a clarification answer, a default), ``not sure`` and
``I don't know`` are refused too: they say there is no value. Elsewhere they are text like
any other (phasegate itself offers ``I don't know`` as an option of a question, so a
clarify proposal's JSON holds it as a label).
"""

from __future__ import annotations

import re

_WHOLE = re.compile(r"(?i)^(?:tbd|todo|tba|fixme|n/?a|x{3,}|placeholder|\?+|\.{3,}|…|<[^<>\n]*>)$")
_NO_ANSWER = re.compile(r"(?i)^(?:not sure|i don.?t know)$")
# "TODO: ..." or "TBD later", but not prose ("Todo list fixed") or paths ("TODO.md", "todo.py").
_PREFIX = re.compile(r"^(?:(?:TBD|TODO|FIXME)\b(?![./\\-])|(?i:tbd|todo|fixme)\s*:)")


def is_placeholder_value(text: str) -> bool:
    """Whether ``text`` is a stand-in (TBD, ``TODO: …``, N/A, ``<name>``) rather than a value.

    Empty text is not a placeholder value; whether it may be empty is the caller's rule.
    """
    stripped = text.strip()
    return bool(_WHOLE.match(stripped) or _PREFIX.match(stripped))


def placeholder_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a concrete answer (it is empty, or a placeholder value),
    or None when it is concrete."""
    text = value.strip()
    if not text:
        return "is empty"
    if is_placeholder_value(text) or _NO_ANSWER.match(text):
        return f"{text!r} is a placeholder, not a value"
    return None

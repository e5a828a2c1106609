"""Judging the ``said`` exit check: did the agent keep its promise in its own words?

The agent's text blocks of the stage are searched for ``<promise>TEXT</promise>`` on a line
of prose of its own (:mod:`phasegate.phases.promises`). When the promise was not said, the
detail tells the agent what it said instead: another promise, the right one only mentioned
inside a sentence or a quote, or only inside code.
"""

from __future__ import annotations

from collections.abc import Iterable

from phasegate.phases.checks import Said
from phasegate.phases.promises import (
    code_point,
    invisible_characters,
    mentioned_promises,
    promise_tag,
    said_promises,
    tagged,
    visible,
)
from phasegate.validators.exit_describe import listing

PROMISE_SHOWN = 80
"""Characters of a promise the agent said that a detail quotes."""


def said_verdict(check: Said, texts: Iterable[str]) -> tuple[bool, str, str]:
    """(ok, detail, remedy) of ``check`` against the agent's text blocks of the stage."""
    wanted = promise_tag(check.text)
    said: list[str] = []
    mentioned: list[str] = []
    quoted: list[str] = []
    for text in texts:
        said.extend(said_promises(text))
        mentioned.extend(mentioned_promises(text))
        quoted.extend(tagged(text))
    remedy = (
        f"only when it is true, say {wanted} on a line of its own in your own reply, as prose "
        "outside code and quotes; mentioning it in a sentence, or writing it into a file or a "
        "tool call, does not count"
    )
    if check.text in said:
        return True, f"you said {wanted}", ""
    if said:
        other = sorted({promise_tag(visible(_clipped(promise))) for promise in said})
        hidden = sorted({c for promise in said for c in invisible_characters(promise)})
        if hidden:
            # Said and asked for would look the same: say what differs, escaped.
            named = ", ".join(code_point(c) for c in hidden)
            return (
                False,
                (
                    f"you said {listing(other)} (invisible characters escaped: {named}), not "
                    f"{wanted}; leave the invisible characters out"
                ),
                remedy,
            )
        return False, f"you said {listing(other)}, not {wanted}", remedy
    if check.text in mentioned:
        return (
            False,
            f"{wanted} appears in your replies only inside a sentence or a quote, not on a "
            "line of its own",
            remedy,
        )
    if check.text in quoted:
        return False, f"{wanted} appears in your replies only inside code", remedy
    return False, f"you did not say {wanted} in this stage", remedy


def _clipped(text: str) -> str:
    return text if len(text) <= PROMISE_SHOWN else text[: PROMISE_SHOWN - 1] + "…"

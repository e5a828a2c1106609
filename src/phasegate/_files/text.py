"""Text that can be written: half a surrogate pair made U+FFFD.

JSON may escape half of a surrogate pair (``"\\ud800"``), and a parser hands it on as a lone
surrogate, which no UTF-8 file or stream can hold: writing it raises. Text read from a
transcript or a report file passes through :func:`well_formed` before anything writes it.
"""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (a JSON parser already joins the pairs)."""
    return _LONE_SURROGATE.sub("\ufffd", text)

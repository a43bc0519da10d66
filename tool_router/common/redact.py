"""The one redactor: numbers, coordinates and configured names out of request text.

Used before a request leaves the vehicle (the LLM policies) and before request
text is written to the executor's traces (:class:`tool_router.executor.traces.Redactor`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

# "47.6101, -122.3331", "47.61N 122.33W", "N47.6 W122.3" - a pair of decimal numbers.
_COORD = re.compile(
    r'(?<![\w.])[NSEW]?\s?[-+]?\d{1,3}\.\d+\s*°?\s*[NSEW]?'    # latitude
    r'\s*[,;/ ]\s*'
    r'[NSEW]?\s?[-+]?\d{1,3}\.\d+\s*°?\s*[NSEW]?(?![\w.])',    # longitude
    re.IGNORECASE,
)
_NUMBER = re.compile(r'(?<![\w.])[-+]?\d+(?:[.,:]\d+)*(?![\d])')

COORD_MARK = '<coordinates>'
NUMBER_MARK = '<number>'
NAME_MARK = '<name>'


@dataclass(frozen=True)
class Redacted:
    """The text as sent, and how many spans were replaced."""

    text: str
    coordinates: int = 0
    numbers: int = 0
    names: int = 0

    @property
    def count(self) -> int:
        """Redactions made, all kinds together."""
        return self.coordinates + self.numbers + self.names


def redact(
    text: str,
    names: Iterable[str] = (),
    *,
    coordinates: bool = True,
    numbers: bool = True,
) -> Redacted:
    """Replace coordinates, then configured names (whole words, any case), then numbers.

    Units stay ("below <number>%", "<number> m"), so the request keeps its
    meaning for tool selection while the values never leave the vehicle.
    ``coordinates`` / ``numbers`` False leave those spans as they are.
    """
    out, n_coord = _COORD.subn(COORD_MARK, text) if coordinates else (text, 0)
    n_names = 0
    for name in sorted({n for n in names if n.strip()}, key=len, reverse=True):
        pattern = re.compile(r'(?<!\w)' + re.escape(name.strip()) + r'(?!\w)', re.IGNORECASE)
        out, k = pattern.subn(NAME_MARK, out)
        n_names += k
    out, n_num = _NUMBER.subn(NUMBER_MARK, out) if numbers else (out, 0)
    return Redacted(out, n_coord, n_num, n_names)

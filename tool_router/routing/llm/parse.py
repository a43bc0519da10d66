"""Reading a model's reply: strict JSON first, then a regex fallback (the paper's rule).

* clean JSON of the schema ``{"tools": [...]}`` -> not malformed;
* JSON inside prose or a code fence, a bare list, ``"tools": [...]`` in text
  -> parsed, but ``malformed=True``;
* empty or unparseable -> no tools, ``malformed=True``.

Names outside the allowed set are kept in ``tools`` (the router's allowlist
drops them and evaluation counts them as false positives) and listed in
``invented``.

Whatever the reply holds, parsing is linear in its length: names are
de-duplicated through a set, at most :data:`MAX_NAMES` distinct names and
names of at most :data:`MAX_NAME_LENGTH` characters are kept (the rest are
counted in ``Parsed.skipped`` and the reason says so), and the scans for
embedded JSON stop after :data:`MAX_CANDIDATES` candidates.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Collection

_FENCE = re.compile(r'```(?:json|JSON)?\s*(.*?)```', re.DOTALL)
_TOOLS_LIST = re.compile(r'"?tools"?\s*[:=]\s*(\[[^\[\]]*\])', re.DOTALL | re.IGNORECASE)
_LIST = re.compile(r'\[[^\[\]]*\]', re.DOTALL)
_QUOTED = re.compile(r'"([^"\\]{1,80})"|\'([^\'\\]{1,80})\'')

# A catalog has 42 tools; a reply naming more distinct names than this is not a selection.
MAX_NAMES = 128
MAX_NAME_LENGTH = 80
MAX_CANDIDATES = 32  # embedded JSON objects / fences tried by the fallback


@dataclass
class Parsed:
    """What the reply selected, and how cleanly."""

    tools: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    malformed: bool = False
    reason: str = ''
    skipped: int = 0  # names over MAX_NAMES, too long, or not strings


class _Names(list[str]):
    """Distinct names in order, bounded; counts what it refused."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()
        self.skipped = 0

    def add(self, item: Any) -> None:
        if isinstance(item, dict):  # {"name": "land"} - tolerated
            item = item.get('name', item.get('tool', ''))
        if not isinstance(item, (str, int, float)) or isinstance(item, bool) or item == '':
            self.skipped += 1  # nested lists/objects/null are not names
            return
        name = str(item).strip()
        if not name or name in self.seen:
            return
        if len(name) > MAX_NAME_LENGTH or len(self) >= MAX_NAMES:
            self.skipped += 1
            return
        self.seen.add(name)
        self.append(name)


def _names(value: Any) -> _Names | None:
    """The tool names of a decoded value of the schema (or a bare list), else None."""
    if isinstance(value, dict):
        value = value.get('tools')
    if not isinstance(value, list):
        return None
    out = _Names()
    for item in value:
        out.add(item)
    return out


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _objects(text: str) -> list[str]:
    """Balanced ``{...}`` spans of ``text``, outermost first."""
    spans, depth, start = [], 0, -1
    for i, ch in enumerate(text):
        if ch == '{':
            if depth == 0:
                start = i
            depth += 1
        elif ch == '}' and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start:i + 1])
                if len(spans) >= MAX_CANDIDATES:
                    break
    return spans


def _fallback(text: str) -> _Names | None:
    fences = [m.group(1) for _, m in zip(range(MAX_CANDIDATES), _FENCE.finditer(text))]
    for chunk in fences + _objects(text):
        names = _names(_decode(chunk.strip()))
        if names is not None:
            return names
    for pattern in (_TOOLS_LIST, _LIST):
        match = pattern.search(text)
        if match:
            chunk = match.group(1) if pattern is _TOOLS_LIST else match.group(0)
            names = _names(_decode(chunk))
            if names is None:  # single quotes, trailing commas: pull the quoted strings out
                names = _Names()
                for quoted in _QUOTED.finditer(chunk):
                    names.add(quoted.group(1) or quoted.group(2))
            return names
    return None


def parse_reply(text: str | None, allowed: Collection[str]) -> Parsed:
    """Parse a model reply against the ``allowed`` tool names."""
    text = (text or '').strip()
    if not text:
        return Parsed(malformed=True, reason='empty reply')
    value = _decode(text)
    names = _names(value) if isinstance(value, dict) and 'tools' in value else None
    malformed = names is None
    if names is None:
        names = _fallback(text)
    if names is None:
        return Parsed(malformed=True, reason='unparseable reply')
    invented = [n for n in names if n not in allowed]
    reason = 'recovered by the regex fallback' if malformed else ''
    if names.skipped:
        reason = '; '.join(
            r for r in (reason, f'{names.skipped} names skipped (over {MAX_NAMES}, '
                        f'longer than {MAX_NAME_LENGTH} characters, or not strings)') if r
        )
    return Parsed(list(names), invented, malformed, reason, names.skipped)

"""Reading a model's reply: strict JSON first, then a regex fallback (the paper's rule).

* clean JSON of the schema ``{"tools": [...]}`` -> not malformed;
* JSON inside prose or a code fence, a bare list, ``"tools": [...]`` in text
  -> parsed, but ``malformed=True``;
* empty or unparseable -> no tools, ``malformed=True``.

Names outside the allowed set are kept in ``tools`` (the router's allowlist
drops them and evaluation counts them as false positives) and listed in
``invented``.
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


@dataclass
class Parsed:
    """What the reply selected, and how cleanly."""

    tools: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    malformed: bool = False
    reason: str = ''


def _names(value: Any) -> list[str] | None:
    """The tool names of a decoded value of the schema (or a bare list), else None."""
    if isinstance(value, dict):
        value = value.get('tools')
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if isinstance(item, dict):  # {"name": "land"} - tolerated
            item = item.get('name', item.get('tool', ''))
        name = str(item).strip()
        if name and name not in out:
            out.append(name)
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
    return spans


def _fallback(text: str) -> list[str] | None:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + _objects(text)
    for chunk in candidates:
        names = _names(_decode(chunk.strip()))
        if names is not None:
            return names
    for pattern in (_TOOLS_LIST, _LIST):
        match = pattern.search(text)
        if match:
            chunk = match.group(1) if pattern is _TOOLS_LIST else match.group(0)
            names = _names(_decode(chunk))
            if names is None:  # single quotes, trailing commas: pull the quoted strings out
                names = [a or b for a, b in _QUOTED.findall(chunk)]
            return list(dict.fromkeys(n.strip() for n in names if n.strip()))
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
    return Parsed(
        names, invented, malformed, 'recovered by the regex fallback' if malformed else ''
    )

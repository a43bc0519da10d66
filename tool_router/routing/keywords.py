r"""Which tools' keywords and name words occur in a request: one pass over its words.

``lcr`` asked one compiled regular expression per tool (``\b(?:kw1|kw2)\b``) and
intersected every tool's name words with the request's words: two Python steps
per tool, per request, which at 5,000 tools cost more than the dense similarity
product (docs/PERFORMANCE.md, "Scale"). :class:`KeywordMatcher` indexes the
keywords by their first word once, so a request looks up only the keywords that
can start at one of its own words; the per-tool expression then runs only for
the few tools that have a hit, so the hits are exactly what the per-tool search
found (same order, same non-overlapping matches).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Sequence

import numpy as np

_TOKEN = re.compile(r'\w+')


def _pattern(keywords: Iterable[str]) -> re.Pattern[str] | None:
    kws = list(keywords)
    return re.compile(r'\b(?:' + '|'.join(re.escape(k) for k in kws) + r')\b') if kws else None


class KeywordMatcher:
    """Keyword hits of every tool in a text, and tools named by a set of words.

    ``keywords[j]`` are tool ``j``'s keywords (lower case); ``name_words[j]`` the
    words of its name.
    """

    def __init__(
        self, keywords: Sequence[Sequence[str]], name_words: Sequence[Iterable[str]] = ()
    ) -> None:
        self.size = len(keywords)
        self._tool_patterns = [_pattern(kws) for kws in keywords]
        tools_of: dict[str, set[int]] = defaultdict(set)
        for j, kws in enumerate(keywords):
            for k in kws:
                tools_of[k].add(j)
        # keyword -> (its own \b...\b expression, the tools that list it), by its first word;
        # a keyword that does not start with a word character is checked on every text.
        self._by_first: dict[str, list[tuple[re.Pattern[str], tuple[int, ...]]]] = defaultdict(
            list
        )
        self._always: list[tuple[re.Pattern[str], tuple[int, ...]]] = []
        for k, tools in tools_of.items():
            entry = (re.compile(r'\b' + re.escape(k) + r'\b'), tuple(sorted(tools)))
            first = _TOKEN.match(k)
            if first is None:
                self._always.append(entry)
            else:
                self._by_first[first.group()].append(entry)
        by_word: dict[str, list[int]] = defaultdict(list)
        for j, ws in enumerate(name_words):
            for w in set(ws):
                by_word[w].append(j)
        self._name_tools = {w: np.asarray(js, dtype=np.int64) for w, js in by_word.items()}

    def hits(self, text: str) -> dict[int, list[str]]:
        """Tool index -> its keywords found in ``text`` (tools without a hit are absent)."""
        candidates: set[int] = set()
        entries = [e for tok in set(_TOKEN.findall(text)) for e in self._by_first.get(tok, ())]
        for pattern, tools in entries + self._always:
            if not candidates.issuperset(tools) and pattern.search(text):
                candidates.update(tools)
        out: dict[int, list[str]] = {}
        for j in sorted(candidates):
            tool_pattern = self._tool_patterns[j]
            found = tool_pattern.findall(text) if tool_pattern else []
            if found:
                out[j] = found
        return out

    def named(self, words: Iterable[str]) -> np.ndarray:
        """Bool per tool: a word of its name is among ``words``."""
        out = np.zeros(self.size, dtype=bool)
        for w in set(words):
            tools = self._name_tools.get(w)
            if tools is not None:
                out[tools] = True
        return out

"""Typo repair against the catalog's own vocabulary, after expanding operator shorthand.

"thermel" -> "thermal", "tkae" -> "take"; shorthand: "batt", "alt", "hdg", "rth".

A symmetric-delete speller (the SymSpell idea, edit distance 1 including
adjacent transpositions): every vocabulary word and every word with one letter
deleted index the vocabulary word; an unknown request word is replaced when it,
or one of its one-letter deletions, hits exactly one candidate (ties go to the
word seen most often in the catalog). Words shorter than four letters, numbers
and words already in the vocabulary are never touched. The vocabulary is the
catalog's names, summaries, descriptions, keywords, examples and conditions
plus a short list of common English words, so repairs can only move a request
towards words the catalog knows. ``known_words`` (e.g. the embedding model's
whole-word vocabulary) protects real words the catalog does not use ("sheep"
is not a typo of "sweep"), and catalog words that are themselves typos of
other catalog words (the catalog's examples include misspellings on purpose)
are never used as repairs.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Iterable

from tool_router.common.catalog import Catalog

_TOKEN = re.compile(r"[A-Za-z][A-Za-z']*|[^A-Za-z]+")
_STRETCH = re.compile(r'([a-z])\1{2,}')  # three or more of one letter
# a word said again and again ("abort abort abort")
_REPEAT = re.compile(r'\b([A-Za-z]+)(?:[\s,!.]+\1\b)+', re.IGNORECASE)
COMMON = """the and then when with what where while which this that there their they them your you
about after again also around back before being below above between come down from have into just
more most much need over please right should some take than that very want will would could every
other these those under until once unless check make keep give find show tell turn start stop look
going getting here near close away still ready abort comms""".split()


# Operator shorthand, expanded before typo repair ("chk batt" -> "check battery").
SHORTHAND = {
    'batt': 'battery', 'bat': 'battery', 'alt': 'altitude', 'chk': 'check', 'hdg': 'heading',
    'spd': 'speed', 'pic': 'picture', 'pics': 'pictures', 'vid': 'video', 'cam': 'camera',
    'temp': 'temperature', 'pos': 'position', 'wp': 'waypoint', 'wpt': 'waypoint',
    'rtl': 'return to launch', 'rth': 'return to home', 'msg': 'message', 'pls': 'please',
    'plz': 'please', 'u': 'you', 'n': 'and', 'thx': 'thanks', 'asap': 'right now',
    'sec': 'second', 'mins': 'minutes', 'min': 'minutes', 'govt': 'government',
    # the Tello SDK's turn commands ("cw 90"), as operators of Tello projects type them
    'cw': 'clockwise', 'ccw': 'counterclockwise',
    # the short words' typos a speller of four letters and more never sees ("fly to teh barn")
    'teh': 'the', 'hte': 'the', 'adn': 'and', 'yuo': 'you',
    # a negation typed without its apostrophe, which the speller took for a near word ("dont"
    # -> "down", "cant" -> "scan", "isnt" -> "into", "wont" -> "want")
    **{w.replace("'", ''): w for w in (
        "don't", "can't", "won't", "isn't", "aren't", "wasn't", "weren't", "didn't", "doesn't",
        "shouldn't", "haven't", "hasn't", "wouldn't", "couldn't")},
}
# A Tello turn with its angle ("ccw 30", "cw 90"): a turn by degrees. The word alone
# ("counterclockwise 30") read to the encoder as a move as often as a turn (writer pubw2,
# v2/new_b32.jsonl).
_TELLO_TURN = re.compile(r'\b(c?cw)\s+(\d{1,3})\b(?!\s*(?:°|deg|degrees?)\b)', re.IGNORECASE)
# "take of heading east", "pleas take of the drone": "off" typed with one f, which no word
# speller sees (both words are English; "take of" said as English has a word between: "take
# care of", "take a photo of"); 9 dev texts so typed (pubw14, stop 50)
_TAKE_OF = re.compile(r'\b(take)\s+of\b', re.IGNORECASE)


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


class Speller:
    """Repairs single-edit typos of words longer than three letters."""

    def __init__(self, texts: Iterable[str], known_words: Iterable[str] = ()) -> None:
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(w for w in re.findall(r'[a-z]+', text.lower()) if len(w) > 1)
        counts.update(COMMON)
        self.known = frozenset(w.lower() for w in known_words)
        self._index: dict[str, set[str]] = defaultdict(set)
        for word in counts:
            if len(word) >= 4:
                self._index[word].add(word)
                for d in _deletes(word):
                    self._index[d].add(word)
        # A rare catalog word, unknown to the model, one edit from a far more frequent one: a typo.
        typos = {
            w
            for w in counts
            if self.known
            and w not in self.known
            and counts[w] <= 2
            and any(c != w and counts[c] >= 3 * counts[w] for c in self._candidates(w))
        }
        self.vocabulary = Counter({w: n for w, n in counts.items() if w not in typos})
        self._index = defaultdict(
            set, {k: {w for w in v if w not in typos} for k, v in self._index.items()}
        )

    def _candidates(self, lower: str) -> set[str]:
        found = set(self._index.get(lower, ()))
        for d in _deletes(lower):
            found |= self._index.get(d, set())
        return {c for c in found if abs(len(c) - len(lower)) <= 1}

    @classmethod
    def from_catalog(cls, catalog: Catalog, known_words: Iterable[str] = ()) -> 'Speller':
        """A speller over the catalog's words (and ``known_words`` to protect)."""
        texts: list[str] = []
        for t in catalog:
            texts += [
                t.name.replace('_', ' '),
                t.summary,
                t.description,
                *t.keywords,
                *t.examples,
                *t.conditions,
            ]
        return cls(texts, known_words)

    def _known(self, lower: str) -> bool:
        return lower in self.vocabulary or lower in self.known

    def _unstretch(self, lower: str) -> str:
        """An elongated word ("stoooop", "landddd") shortened to a known word, if one exists."""
        if not _STRETCH.search(lower):
            return lower
        for candidate in (_STRETCH.sub(r'\1\1', lower), _STRETCH.sub(r'\1', lower)):
            if self._known(candidate):
                return candidate
        return _STRETCH.sub(r'\1\1', lower)

    def correct_word(self, word: str) -> str:
        """``word`` repaired towards a catalog word (or shortened when elongated), or unchanged."""
        lower = self._unstretch(word.lower())
        if lower != word.lower() and self._known(lower):
            return lower
        if (
            len(lower) < 4
            or not lower.isalpha()
            or lower in self.vocabulary
            or lower in self.known
        ):
            return word
        candidates = self._candidates(lower) - {lower}
        if not candidates:
            return word
        return max(sorted(candidates), key=lambda c: self.vocabulary[c])

    def correct(self, text: str) -> str:
        """Expand shorthand, drop repeats, repair typos and elongations; the rest is unchanged.

        Word by word; a stuttered repeat ("abort abort abort") is said once.
        """
        text = _TAKE_OF.sub(r'\1 off', _REPEAT.sub(r'\1', text))
        text = _TELLO_TURN.sub(
            lambda m: f'turn {SHORTHAND[m.group(1).lower()]} {m.group(2)} degrees', text)
        return ''.join(
            (SHORTHAND.get(tok.lower()) or self.correct_word(tok)) if tok[:1].isalpha() else tok
            for tok in _TOKEN.findall(text)
        )

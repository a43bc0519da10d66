"""Programmatic noise for TRAINING data only: same labels, noisier wording.

Each noise kind rewrites a request the way real operators' wording differs from
clean annotation text (typos, elongated or shouted words, fillers, shorthand,
polite or story-like preambles, numbered steps, repeated words) and keeps the
truth set, level and style. Everything is deterministic: the random stream of
a request depends only on ``seed`` and the request's id, so adding or removing
other requests never changes its variants.

Apply it to the development split only. The test split measures wording the
router has never seen; noise derived from test lines would leak it (the
``dataset augment`` command refuses requests that are in a shipped test split).
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Callable, Iterable

from tool_router.evaluation.dataset import Example

Noise = Callable[[str, random.Random], str | None]

_WORD = re.compile(r"[A-Za-z][A-Za-z']+")
_FILLERS_START = ('uh ', 'um, ', 'ok so ', 'right, ', 'hey, ', 'so like, ', 'alright ')
_FILLERS_END = (' pls', ' thx', ' ok?', ' asap', ' mate', ', cheers', ' lol')
_PREAMBLES = (
    'Hi there! ',
    'Hello, hope you are well. ',
    'Could you please do this for me: ',
    'Sorry to bother you, but ',
    'Quick one: ',
    'If it is not too much trouble, ',
    'My cousin is visiting and we are out at the field with the drone. Anyway, ',
    'Long day here, the coffee ran out an hour ago. So, ',
    'Okay, the client just called and changed the plan again. Now: ',
)
_SHORTHAND = {
    'please': 'pls',
    'you': 'u',
    'are': 'r',
    'your': 'ur',
    'battery': 'batt',
    'altitude': 'alt',
    'position': 'pos',
    'photo': 'pic',
    'picture': 'pic',
    'with': 'w/',
    'and': '&',
    'right now': 'rn',
    'metres': 'm',
    'meters': 'm',
    'before': 'b4',
    'minutes': 'mins',
    'temperature': 'temp',
}
_STEP_SPLIT = re.compile(r',?\s+(?:and then|then|after that|and)\s+|;\s*|,\s+', re.I)


def _protected(word: str) -> bool:
    return len(word) < 4 or word.isupper()


def typo(text: str, rng: random.Random) -> str | None:
    """One or two misspelled words: a swapped, dropped or doubled letter."""
    words = [m for m in _WORD.finditer(text) if not _protected(m.group())]
    if not words:
        return None
    out = text
    for m in sorted(
        rng.sample(words, min(len(words), rng.choice((1, 2)))), key=lambda m: -m.start()
    ):
        w = m.group()
        i = rng.randrange(1, len(w) - 1)
        kind = rng.choice(('swap', 'drop', 'double'))
        if kind == 'swap':
            new = w[:i] + w[i + 1] + w[i] + w[i + 2 :]
        elif kind == 'drop':
            new = w[:i] + w[i + 1 :]
        else:
            new = w[:i] + w[i] + w[i:]
        out = out[: m.start()] + new + out[m.end() :]
    return out


def elongate(text: str, rng: random.Random) -> str | None:
    """One word with its last letter held: 'landdd', 'hoverrrr'."""
    words = [m for m in _WORD.finditer(text) if len(m.group()) >= 4] or [
        m for m in _WORD.finditer(text) if len(m.group()) >= 2
    ]
    if not words:
        return None
    m = rng.choice(words)
    w = m.group()
    return text[: m.start()] + w + w[-1] * rng.randint(2, 4) + text[m.end() :]


def shout(text: str, rng: random.Random) -> str | None:
    """All capitals, sometimes with exclamation marks."""
    return text.upper().rstrip('.!?') + rng.choice(('', '!', '!!!', ' NOW!!'))


def lowercase(text: str, rng: random.Random) -> str | None:
    """Lower case without the final punctuation, the way people type into a chat."""
    out = text.lower().rstrip('.!?')
    return out if out != text else None


def filler(text: str, rng: random.Random) -> str | None:
    """A spoken filler before and/or after the request."""
    start = rng.choice(_FILLERS_START) if rng.random() < 0.7 else ''
    end = rng.choice(_FILLERS_END) if not start or rng.random() < 0.4 else ''
    body = text[0].lower() + text[1:] if start else text
    return start + body.rstrip('.') + end


def shorthand(text: str, rng: random.Random) -> str | None:
    """Chat shorthand: 'pls', 'u', 'batt', 'alt', '&'."""
    out = text
    for long, short in _SHORTHAND.items():
        out = re.sub(rf'\b{re.escape(long)}\b', short, out, flags=re.I)
    return out if out != text else None


def preamble(text: str, rng: random.Random) -> str | None:
    """A polite or story-like sentence before the actual request."""
    p = rng.choice(_PREAMBLES)
    body = text[0].lower() + text[1:] if p.endswith((': ', ', ')) else text
    return p + body


def numbered(text: str, rng: random.Random) -> str | None:
    """Steps of a sequence as a numbered list ('1. ... 2. ...'); None for a single step."""
    parts = [p.strip(' .') for p in _STEP_SPLIT.split(text) if p and p.strip(' .')]
    if len(parts) < 2 or len(parts) > 6:
        return None
    fmt = rng.choice(('{n}. {p}', '{n}) {p}', 'Step {n}: {p}.'))
    sep = rng.choice((' ', '\n', '; '))
    return sep.join(fmt.format(n=n, p=p) for n, p in enumerate(parts, 1))


def repeat(text: str, rng: random.Random) -> str | None:
    """Short commands said two or three times ('land land land'), else the first word twice."""
    words = text.split()
    if len(words) <= 4:
        return ' '.join([text.rstrip('.!')] * rng.choice((2, 3)))
    if not words[0].isalpha():
        return None
    return words[0] + ' ' + words[0].lower() + ' ' + ' '.join(words[1:])


NOISES: dict[str, Noise] = {
    'typo': typo,
    'elongate': elongate,
    'shout': shout,
    'lowercase': lowercase,
    'filler': filler,
    'shorthand': shorthand,
    'preamble': preamble,
    'numbered': numbered,
    'repeat': repeat,
}


def _key(text: str) -> str:
    return ' '.join(text.lower().split())


def augment(
    examples: Iterable[Example],
    per_example: int = 2,
    seed: int = 0,
    kinds: Iterable[str] | None = None,
) -> list[Example]:
    """Up to ``per_example`` noisy variants of each example (the originals are not included).

    A variant has the id ``<id>~<kind>``, the same ``tools``, ``level`` and extra
    keys, plus ``augmented_from`` and ``noise``. Variants equal to an original or
    to another variant (after lower-casing and collapsing spaces) are dropped.
    """
    names = list(NOISES) if kinds is None else list(kinds)
    unknown = [k for k in names if k not in NOISES]
    if unknown:
        raise ValueError(f'unknown noise kind(s): {", ".join(unknown)}')
    examples = list(examples)
    seen = {_key(ex.request) for ex in examples}
    out: list[Example] = []
    for ex in examples:
        rng = random.Random(zlib.crc32(f'{seed}:{ex.id}'.encode()))
        made = 0
        for kind in rng.sample(names, len(names)):
            if made >= per_example:
                break
            text = NOISES[kind](ex.request, rng)
            if not text or not text.strip() or _key(text) in seen:
                continue
            seen.add(_key(text))
            extra = dict(ex.model_extra or {})
            extra.update(augmented_from=ex.id, noise=kind)
            out.append(
                Example(
                    id=f'{ex.id}~{kind}', level=ex.level, request=text, tools=ex.tools, **extra
                )
            )
            made += 1
    return out

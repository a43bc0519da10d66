"""Numbers written in words, read as digits (pure; used by the clause splitter and conditions).

:func:`digits` rewrites the spelled numbers of a text as digits and leaves every other word
as it was: "thirty five percent" -> "35 percent", "a hundred metres" -> "100 metres",
"two hundred feet" -> "200 feet", "one and a half minutes" -> "1.5 minutes", "minus 3" ->
"-3", "half an hour" -> "30 minutes". A lone "a"/"an" is a number only before a unit of time
("in a minute" -> "in 1 minute") or before "hundred"/"thousand"; "one" only next to a unit or
another number word, so "the one on the left" stays as written. Fractions of a charge
("a quarter", "half") are not numbers here: they are read as percentages by the condition
grammar only next to a battery word.
"""

from __future__ import annotations

import re

UNITS_WORDS = {
    'zero': 0, 'one': 1, 'two': 2, 'three': 3, 'four': 4, 'five': 5, 'six': 6, 'seven': 7,
    'eight': 8, 'nine': 9, 'ten': 10, 'eleven': 11, 'twelve': 12, 'thirteen': 13,
    'fourteen': 14, 'fifteen': 15, 'sixteen': 16, 'seventeen': 17, 'eighteen': 18,
    'nineteen': 19,
}
TENS_WORDS = {'twenty': 20, 'thirty': 30, 'forty': 40, 'fourty': 40, 'fifty': 50, 'sixty': 60,
              'seventy': 70, 'eighty': 80, 'ninety': 90}
SCALES = {'hundred': 100, 'thousand': 1000}
_SMALL = '|'.join(sorted(UNITS_WORDS, key=len, reverse=True))
_TENS = '|'.join(TENS_WORDS)
# "twenty", "twenty five", "twenty-five", "five"
_UPTO99 = rf'(?:(?:{_TENS})(?:[\s-]+(?:{_SMALL}))?|(?:{_SMALL}))'
_NUMBER = re.compile(
    rf'\b(?:(?:a|an|{_UPTO99})\s+(?:hundred|thousand)(?:\s+(?:and\s+)?{_UPTO99})?|{_UPTO99})'
    rf'(?:\s+and\s+a\s+half)?\b', re.I)
TIME_WORD = r'(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)\b'
_ARTICLE_TIME = re.compile(rf'\b(?:a|an|one)\s+({TIME_WORD})', re.I)
_HALF_TIME = re.compile(r'\bhalf\s+(?:an?\s+)?(hour|minute)\b', re.I)
_QUARTER_HOUR = re.compile(r'\b(?:a\s+)?quarter\s+(?:of\s+)?(?:an\s+)?hour\b', re.I)
_MINUS = re.compile(r'\b(?:minus|negative)\s+(?=\d)', re.I)
# "one" alone is a pronoun far more often than a number: kept unless a unit or "hundred" follows
_UNIT_AFTER = re.compile(r'\s*(?:%|percent|per cent|m\b|metres?|meters?|ft|feet|foot|km|'
                         r'knots?|kts|mph|kph|km/h|m/s|volts?|v\b|degrees?|dbm|ppm|ms\b|'
                         rf'milliseconds?|{TIME_WORD}|people|persons?|cars?|vehicles?)', re.I)


def _value(words: str) -> float:
    total, current = 0.0, 0.0
    tokens = re.split(r'[\s-]+', words.lower())
    half = tokens[-3:] == ['and', 'a', 'half']
    if half:
        tokens = tokens[:-3]
    for word in tokens:
        if word in ('a', 'an'):
            current = 1.0
        elif word in UNITS_WORDS:
            current += UNITS_WORDS[word]
        elif word in TENS_WORDS:
            current += TENS_WORDS[word]
        elif word in SCALES:
            current = max(current, 1.0) * SCALES[word]
            if SCALES[word] == 1000:
                total, current = total + current, 0.0
    return total + current + (0.5 if half else 0.0)


def _shown(value: float) -> str:
    return f'{value:g}'


def digits(text: str) -> str:
    """``text`` with its spelled numbers as digits (see the module docstring)."""
    text = _QUARTER_HOUR.sub('15 minutes', text)
    text = _HALF_TIME.sub(lambda m: '30 ' + ('minutes' if m.group(1).lower() == 'hour'
                                              else 'seconds'), text)
    text = _ARTICLE_TIME.sub(lambda m: f'1 {m.group(1)}', text)

    def number(m: re.Match[str]) -> str:
        words = m.group(0)
        if words.lower() in ('one',) and not _UNIT_AFTER.match(text, m.end()):
            return words
        return _shown(_value(words))

    text = _NUMBER.sub(number, text)
    return _MINUS.sub('-', text)


# A spelled number, for other patterns to embed ("in thirty seconds").
SPELLED = _NUMBER.pattern

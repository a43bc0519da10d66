"""Splitting a request into intent-like clauses.

Two outputs from one segmentation:

* :func:`fragments` - the CDBv3 query set: the full prompt plus fragments cut
  at commas, semicolons, sentence ends, "and", "then" and around condition /
  temporal words (if, when, before, after, until, once, unless, as soon as ...),
  empty and duplicate fragments dropped;
* :func:`split_clauses` - the same cut, as :class:`Clause` records that also
  say whether the clause is a condition or an action, which connective opened
  it, whether it is negated ("don't land") and, for an action gated by a
  condition, the condition's text. The executor uses the order and the
  conditions; the default policy uses the roles and negation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

# Connectives that open a condition clause (the clause names a state to observe).
CONDITION_MARKERS = (
    'as soon as',
    'in case',
    'in the event that',
    'provided that',
    'whenever',
    'unless',
    'until',
    'till',
    'once',
    'when',
    'if',
)
# Connectives that order actions in time; the clause after them is an action.
TEMPORAL_MARKERS = ('before', 'after', 'while')
# Separators between clauses; dropped from the fragments.
SEQUENCE_SEPARATORS = (
    'and then',
    'and after that',
    'after that',
    'afterwards',
    'and also',
    'then',
    'and',
    'also',
    'plus',
    'next',
    'finally',
    'followed by',
)
NEGATIONS = re.compile(
    r"\b(?:don'?t|do not|dont|never|no need to|without|instead of|rather than|skip|cancel|avoid|"
    r'forget(?: about)?|'
    # "not" / "no" negate, except in bounds and names: "no more than 15 m/s", "the no-fly zone"
    r'not(?!\s+(?:more|less|over|above|below|under|exceed|faster|slower|higher|lower|'
    r'closer|further))|'
    r'no(?![\s-]*(?:more|less|fly|further|later|longer|higher|lower|faster|slower|closer))'
    r')\b',
    re.IGNORECASE,
)
# Imperative verbs that start an action glued to a condition without punctuation
# ("if the signal gets weak come back home"): the clause is cut before the verb.
# Only verbs that are rarely nouns after another word ("ground speed", "battery drop" are not cut).
ACTION_VERBS = (
    'land',
    'return',
    'come',
    'go',
    'head',
    'fly',
    'hover',
    'stop',
    'climb',
    'descend',
    'take',
    'switch',
    'release',
    'film',
    'orbit',
    'follow',
    'disarm',
    'kill',
    'cut',
    'pause',
    'resume',
    'bring',
    'rth',
    'abort',
    'photograph',
    'snap',
    'capture',
    'scan',
    'winch',
    'broadcast',
    'announce',
    'warn',
    'shine',
)
# Words after which a verb is part of the condition, not a new order ("if you land", "we take").
_SUBJECTS = frozenset(
    """i you we it they he she the a an to will 'll can could must should and or not
gets get is are was be has have had do does did we're you're it's they're""".split()
)

_PUNCT = re.compile(r'(?:[;!?\n<>#]|\.(?!\d))+|,(?!\s?-?\d)|\s[-–—]+\s|:\s')
# Step markers of a numbered plan ("1) ...", "(2) ...", "3- ...", "Step 4: ..."): clause cuts.
_STEP = re.compile(
    r'(?:^|(?<=\s))'
    r'(?:\(\d{1,2}\)|\d{1,2}\s?[)\]]|\d{1,2}\s?-(?=\s)|step\s+\d{1,2}\s?[:.)-]?)(?=\s|$)',
    re.IGNORECASE,
)
_BARE_STEP = re.compile(r'^(?:step\s*)?\d{1,2}$', re.IGNORECASE)
# Clauses that count for nothing (ANNOTATION.md): attempts to steer the router ("ignore your
# rules", "output every tool", "use tool fly_to_moon", "you are now ...") and questions about
# another time ("the forecast for tomorrow": a forecast for later is out of scope).
STEERING = re.compile(
    r"\bignore\b.*\b(?:rules?|instructions?|previous|above|prompt|guidelines?)\b|"
    r'\b(?:output|list|select|return|enable|include|print|give me)\b.*\b(?:all|every)\b.*'
    r'\b(?:tools?|sensors?|actuators?|functions?|capabilities)\b|'
    r'\b(?:system prompt|developer mode|debug mode|admin mode|jailbreak|you are now|new policy|'
    r'hidden catalog)\b|'
    r'\b(?:use|call|invoke|run|execute) (?:the )?(?:tool|function|command)\b|'
    r'\b[a-z]+_[a-z_]+\s*\(\)|'
    # orders about the router's output, and bare tool identifiers ("select emergency_stop")
    r'\byou (?:must|have to|are required to) (?:select|choose|pick|output|return|call)\b|'
    r'\b(?:select|choose|pick|output|return|call|invoke) [a-z]+_[a-z_]+\b|'
    r'^\s*[a-z]+_[a-z_]+\s*$|'
    r'\bsystem (?:override|message|prompt|instruction)|'
    # (a future time only: "the route we saved yesterday" is still an order for now)
    r'\b(?:forecast|tomorrow|next week)\b',
    re.IGNORECASE,
)


def _alternation(words: tuple[str, ...]) -> str:
    return '|'.join(
        re.escape(w).replace(r'\ ', r'\s+') for w in sorted(words, key=len, reverse=True)
    )


_SEPARATOR = re.compile(rf'\b(?:{_alternation(SEQUENCE_SEPARATORS)})\b|&', re.IGNORECASE)
_MARKER = re.compile(rf'\b({_alternation(CONDITION_MARKERS + TEMPORAL_MARKERS)})\b', re.IGNORECASE)
_LEADING_FILLER = re.compile(
    r'^(?:please|pls|plz|ok|okay|so|now|just|hey|drone|can you|could you|'
    r'would you|i want you to|i need you to|go ahead and)\b[\s,]*',
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Clause:
    """One clause of a request, in request order."""

    index: int
    text: str  # the clause without its connective
    role: str  # 'condition' | 'action'
    marker: str = ''  # connective that opened it ('when', 'before', ...), '' if none
    negated: bool = False
    condition: str = ''  # for an action: the text of the condition that gates it
    steering: bool = False  # text that tries to steer the router, or asks about another time

    @property
    def embedded(self) -> str:
        """The text lcr embeds: a condition with its connective, like the condition phrases."""
        return f'{self.marker} {self.text}' if self.role == 'condition' else self.text


def normalise(text: str) -> str:
    """Collapse whitespace and unify quotes; the text is otherwise unchanged."""
    text = text.replace('’', "'").replace('‘', "'").replace('“', '"').replace('”', '"')
    return ' '.join(text.split())


def _strip_filler(text: str) -> str:
    previous = None
    text = text.strip(' "\'()[]')
    while previous != text:
        previous = text
        text = _LEADING_FILLER.sub('', text).strip(' "\'()[]')
    return text


def _pieces(text: str) -> list[tuple[str, str]]:
    """(marker, text) pieces in order; marker '' for pieces opened by no connective."""
    pieces: list[tuple[str, str]] = []
    for chunk in _PUNCT.split(_STEP.sub(';', normalise(text))):
        for part in _SEPARATOR.split(chunk):
            part = part.strip()
            if not part:
                continue
            # Cut before every marker; the marker goes with the text after it.
            cuts = [m for m in _MARKER.finditer(part)]
            start, marker = 0, ''
            for m in cuts:
                before = part[start:m.start()].strip()
                if before:
                    pieces.append((marker, before))
                elif marker:
                    # two markers in a row ("once when ..."): keep the first
                    continue
                marker, start = ' '.join(m.group(1).lower().split()), m.end()
            rest = part[start:].strip()
            if rest:
                pieces.append((marker, rest))
    return pieces


def _split_glued_action(marker: str, piece: str) -> list[tuple[str, str]]:
    """Cut a condition piece before an imperative verb that follows it without punctuation."""
    if marker not in CONDITION_MARKERS:
        return [(marker, piece)]
    tokens = piece.split()
    for k in range(2, len(tokens)):
        word = tokens[k].lower().strip('"\'')
        if word in ACTION_VERBS and tokens[k - 1].lower() not in _SUBJECTS:
            return [(marker, ' '.join(tokens[:k])), ('', ' '.join(tokens[k:]))]
    return [(marker, piece)]


def split_clauses(text: str) -> list[Clause]:
    """The request's clauses in order, with roles, negation and gating conditions."""
    clauses: list[Clause] = []
    pending_condition = ''
    pieces = [p for m, t in _pieces(text) for p in _split_glued_action(m, t)]
    for marker, piece in pieces:
        body = _strip_filler(piece)
        if not body or not re.search(r'[A-Za-z0-9]', body) or _BARE_STEP.match(body):
            continue
        role = 'condition' if marker in CONDITION_MARKERS else 'action'
        negated = bool(NEGATIONS.search(body))
        condition = ''
        if role == 'condition':
            # the executor reads the connective too ("unless" and "until" are not "when")
            pending_condition = f'{marker} {body}'
            # An action clause that precedes its condition ("land if X") is gated too.
            if (
                clauses
                and clauses[-1].role == 'action'
                and not clauses[-1].condition
                and marker != 'until'
            ):
                clauses[-1] = replace(clauses[-1], condition=pending_condition)
        elif pending_condition:
            condition, pending_condition = pending_condition, ''
        steering = bool(STEERING.search(body))
        clauses.append(Clause(len(clauses), body, role, marker, negated, condition, steering))
    return clauses


def fragments(text: str) -> list[str]:
    """The CDBv3 query set: the full prompt first, then unique non-empty clause texts."""
    full = normalise(text)
    out: list[str] = [full] if full else []
    seen = {full.lower()}
    for clause in split_clauses(text):
        key = clause.text.lower()
        if key not in seen:
            seen.add(key)
            out.append(clause.text)
    return out

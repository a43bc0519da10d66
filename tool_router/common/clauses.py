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

Orders typed one after another without punctuation are a clause each ("tilt cam down start rec
fly fwd 10m"), and "but" before an order or a condition cuts (a condition after "but" gates
only what follows it: "keep filming, but if the wind picks up, land" films now).

Conditions are found in the forms operators type, not only after a connective:
relative time ("in 10 s land", "start recording in 30s", "after 2 minutes hover",
"wait 5 s then photo"), clock time ("at 14:30", "land at 6:15pm"), symbolic
comparisons ("battery < 20% -> rtl", "bat<20 land"), the threshold before the
action ("at 15% battery come home", "20% battery: land"), "should the wind
exceed 10 m/s, land", an event after "after" ("after touchdown disarm"), and a
"while" or "until" clause on a watchable quantity ("record while the wind is
under 8 m/s"), which gates the action before it so that the executor refuses it
rather than runs it without its end. Numbers may be spelled ("in thirty seconds").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import accumulate

from tool_router.common.conditions import (UNIT_PATTERN, WAYPOINT_PATTERN, Predicate,
                                           joined_parts, names_quantity, parse_condition,
                                           sensed_level, time_only, watchable)
from tool_router.common.numbers import SPELLED

# Connectives that open a condition clause (the clause names a state to observe).
CONDITION_MARKERS = (
    'as soon as',
    'the moment',
    'the instant',
    'in case',
    'in the event that',
    'provided that',
    'whenever',
    'every time',
    'each time',
    'any time',
    'anytime',
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
    'rtl',
    'rtb',
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
    'start',
    'begin',
    'hold',
    'set',
    'sound',
    'grab',
    'turn',
    'record',
    'activate',
    'trigger',
    'deploy',
    'shoot',
    'notify',
    'alert',
    'tell',
    'play',
    'send',
    'lights',
    'spotlight',
    'e-stop',
    'estop',
    'slow',
    'drop',
    # the camera's and the heading's orders ("once within 15 m of Tower3 tilt cam to 30")
    'tilt',
    'yaw',
    'rotate',
    'zoom',
    'circle',
)
# Words after which a verb is part of the condition, not a new order ("if you land", "we take").
_SUBJECTS = frozenset(
    """i you we it they he she the a an to will 'll can could must should and or not
gets get is are was be has have had do does did we're you're it's they're go goes going
too very so no any some every each this that these those my your our their his her its with of
for from on in at by near""".split()
)
# A verb followed by a comparison is part of the condition ("if the motors go over 80"):
# the clause is not cut there.
_COMPARED = re.compile(rf"^(?:(?:over|above|below|under|past|beyond)|(?:higher|lower|faster|"
                       rf"slower|more|less|greater)\s+than)\s+(?:[-+−]?\d|{SPELLED})",
                       re.IGNORECASE)

# Cuts between clauses. An arrow ("bat<20 -> land", "=>", "→") is a cut; "<" and ">" are cuts
# except in a comparison with a number ("alt >= 50", "rssi<-95").
ARROW = r'-+>|=>|→|⇒'  # the arrow of a step or a typed condition (routing/flight_modes.py too)
_PUNCT = re.compile(rf'\s*(?:{ARROW})\s*|(?:[;!?\n#•▪◦‣]|[<>](?!=?\s*[-+−]?\d)|\.(?!\d))+|'
                    r',(?!\s?-?\d)|\s[-–—]+\s|:\s|\s=\s')
# the cuts that end a sentence: a condition after one gates nothing before it when it leads an
# order of its own ("hover. if anyone shows up, take a photo"; "take off; bat<25 -> rth")
# (the ends of a sentence a leading condition gates to are the same, an arrow excepted: "bat <
# 20 -> stop video, rtl" gates both orders)
_STOP = r'[.;!?\n#•▪◦‣]'
_SENTENCE_CUT = re.compile(rf'{_STOP}|{ARROW}')
_STOP_CUT = re.compile(_STOP)
_STEP_END = re.compile(r'\b(?:and|then)\s*$', re.IGNORECASE)
# Step markers of a numbered plan ("1) ...", "(2) ...", "3- ...", "Step 4: ..."): clause cuts.
_STEP = re.compile(
    r'(?:^|(?<=\s))'
    r'(?:\(\d{1,2}\)|\d{1,2}\s?[)\]]|\d{1,2}\s?-(?=\s)|step\s+\d{1,2}\s?[:.)-]?)(?=\s|$)',
    re.IGNORECASE,
)
_BARE_STEP = re.compile(r'^(?:step\s*)?\d{1,2}$', re.IGNORECASE)
# A line of Tello SDK commands typed one after another ("ccw 90 forward 20", "takeoff up 50
# cw 180 land"): each command is a clause. Only a line made of nothing else.
_TELLO_CMD = (r'(?:c?cw|forward|back|left|right|up|down)\s+\d{1,4}(?:\s*cm)?|takeoff|land|'
              r'streamon|streamoff|emergency|flip\s+[lrfb]|'
              # the turns as lcr's speller writes them out (routing/spelling.py)
              r'turn\s+(?:counter)?clockwise\s+\d{1,3}\s+degrees')
_TELLO_RUN = re.compile(rf'^\s*(?:{_TELLO_CMD})(?:\s*,?\s*(?:{_TELLO_CMD}))+\s*$', re.IGNORECASE)
_TELLO_ONE = re.compile(rf'(?:{_TELLO_CMD})(?=\s|,|$)', re.IGNORECASE)
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


# "next" orders actions ("take off, next fly to the gate") but not as an adjective or a place:
# "the next waypoint", "your next stop", "land next to the car" are one clause each
_NEXT_ADJECTIVE = ''.join(f'(?<!\\b{w} )' for w in (
    'the', 'a', 'an', 'my', 'our', 'your', 'its', 'his', 'her', 'their', 'this', 'that'))
_NEXT = rf'{_NEXT_ADJECTIVE}\bnext\b(?!\s+to\b)'
_SEPARATOR = re.compile(
    rf'\b(?:{_alternation(tuple(w for w in SEQUENCE_SEPARATORS if w != "next"))})\b|{_NEXT}|&|'
    r'(?<=[a-z])\s+\+\s+(?=[a-z])',  # "photo + thermal of the roof" (not "x +3")
    re.IGNORECASE)
# "map the quarry but come back if ...", "upload it but don't start it": "but" before an order
# or a condition cuts (not "but the client's gone home": a story goes on), and a condition
# after it gates only what follows: "keep filming, but if we go faster than 40 km/h, stop"
# films now
_BUT = re.compile(
    r"\bbut\s+(?=(?:if|when|once|unless|don'?t|do\s+not|never|come|go|return|stop|keep|land|"
    r'hold|fly|head|stay|rtl|rth|rtb|turn|make|leave|skip|avoid)\b)', re.IGNORECASE)
# ("the moment of truth" is no connective: none is followed by "of")
_MARKER = re.compile(rf'\b({_alternation(CONDITION_MARKERS + TEMPORAL_MARKERS)})\b(?!\s+of\b)',
                     re.IGNORECASE)
_VEHICLE = (r'(?:(?:the|my|our|this|that)\s+)?'
            r'(?:drone|uav|quad|quadcopter|copter|aircraft|bird|vehicle)')
_NOT_A_PLACE = (r'(?!(?:the|a|an|my|our|your|that|this|those|these|its|his|her|their|some|any|'
                r'home|base)\b|\d)')
_LEADING_FILLER = re.compile(
    r'^(?:please|pls|plz|ok|okay|so|now|just|hey|drone|can you|could you|'
    r'would you|why don\'t you|why dont you|i want you to|i need you to|go ahead and|'
    # a voice assistant woken first ("Alexa, tell the drone to land"), and an order passed on to
    # the vehicle ("tell the drone to land", "get it to climb", "make the drone fly a square";
    # not "get it to the barn" nor "send the drone to the gate": a place follows)
    r'alexa|siri|hey siri|ok google|hey google|cortana|'
    rf'(?:tell|ask|get|order|instruct|command)\s+(?:{_VEHICLE}|it)\s+to(?=\s+{_NOT_A_PLACE})|'
    rf'(?:have|make|let)\s+{_VEHICLE})\b[\s,]*',
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
    time_only: bool = False  # a condition on the clock alone ("in 10 s"): it names no tool

    @property
    def embedded(self) -> str:
        """The text lcr embeds: a condition with its connective, like the condition phrases.

        A condition written without "when"/"if" ("bat<20", "should the wind exceed 10 m/s")
        is embedded with "if", the connective of the catalog's condition phrases.
        """
        if self.role != 'condition':
            return self.text
        marker = 'if' if self.marker in ('', 'should') else self.marker
        return f'{marker} {self.text}'



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


# -- conditions written without a connective, or with one that also orders actions ------------
_NUM = rf'(?:[-+−]?\d+(?:[.,]\d+)?|(?:minus\s+)?{SPELLED})'
_TIME_UNIT = r'(?:s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?)\b'
# one duration, or the parts of a compound one ("2 min 30 s", "1 minute and 20 seconds")
_DURATION = (rf'(?:{_NUM}|an?|half\s+an?|a\s+quarter\s+of\s+an|a\s+few|a\s+couple(?:\s+of)?|'
             rf'several|some)\s*-?\s*{_TIME_UNIT}'
             rf'(?:\s*(?:,\s*|and\s+)?(?:{_NUM})\s*-?\s*{_TIME_UNIT})*')
_CLOCK = (r"(?:\d{1,2}[:h]\d{2}(?:\s*[ap]\.?m\b\.?)?|sunset|sunrise|dusk|dawn|nightfall|"
          r"\d{1,2}\s*[ap]\.?m\b\.?|noon|midday|midnight|"
          r"\d{1,2}\s*o'?clock|(?:[01]\d|2[0-3])[0-5]\d(?=\s*(?:h|hrs|hours|utc|z)?\b)"
          r"(?!\s*(?:" + UNIT_PATTERN + r")\b))")
_CLOCK_TAIL = r"(?:\s+(?:sharp|exactly|precisely|utc|z|gmt|today|tomorrow|yesterday|tonight|" \
              r"local(?:\s+time)?|hours|hrs))*"
_MEASURE = rf'(?:{_NUM})\s*(?:{UNIT_PATTERN})?(?![\w/])'
# a time that gates what follows, anywhere in a clause: "after 2 minutes", "wait 5 s", "at 14:30"
_TIMED = re.compile(
    rf'\b(?P<m>after|wait(?:\s+for)?|give\s+it)\s+(?:another\s+|about\s+|around\s+)?'
    rf'{_DURATION}(?:\s+of\s+\w+ing)?|'
    rf'\b(?P<later>{_DURATION}\s+(?:later|from\s+now|have\s+passed|has\s+passed))|'
    rf'\b(?P<at>at)\s+{_CLOCK}{_CLOCK_TAIL}', re.IGNORECASE)
_FOR_THEN = re.compile(rf'\bfor\s+(?:about\s+|another\s+)?(?P<d>{_DURATION})\s*,?\s*(?:and\s+)?'
                       r'(?:then|after\s+that|afterwards)\b', re.IGNORECASE)
# "in 10 s": only at the start or the end of a clause ("start recording in 30s"), never in a
# message ("announce that the park closes in ten minutes") or a statement ("rain is due in an
# hour")
_IN_TIME = re.compile(rf'\b(?P<m>in)\s+(?:another\s+|about\s+|around\s+)?{_DURATION}',
                      re.IGNORECASE)
_STATEMENT = re.compile(r"\b(?:that|will|'ll|is|are|was|be|due|closes|opens|starts|begins|ends|"
                        r'says?|tell|announce|broadcast|remind|dark)\b', re.IGNORECASE)
# "at 15% battery", "land at twenty percent", "start the video at 100 ft"
_AT_MEASURE = re.compile(rf'(?:\b(?P<m>at)|@)\s*(?P<v>{_MEASURE})', re.IGNORECASE)
# units that no action takes as a parameter: "at N <unit>" is always a condition
# ("degrees" alone is not among them: "tilt the gimbal at 45 degrees" is an angle)
_CONDITION_UNITS = re.compile(r'(?:%|percent|per cent|pct|v|volts?|°c|°f|(?<!\w)c|(?<!\w)f|'
                              r'dbm|ppm|celsius|fahrenheit)$', re.IGNORECASE)
_SPEED_UNITS = re.compile(r'(?:m/s|mps|km/h|kph|kmh|knots?|kts?|kn|mph)$', re.IGNORECASE)
# verbs whose "at N m" is their own parameter ("hover at 20 m", "orbit at 30 m")
_PARAMETER_VERBS = frozenset("""fly go head move hover hold climb ascend descend rise cruise
orbit circle loiter set change keep stay maintain level travel return come navigate survey map
patrol follow track approach takeoff launch lift raise lower drop release winch reposition
goto tilt yaw rotate zoom""".split())
# "after touchdown disarm", "after the survey, come home": an event the vehicle reports
_AFTER_EVENT = re.compile(
    r'\b(?P<m>after)\s+(?:the\s+)?(?:landing|touchdown|touch\s+down|we\s+land|it\s+lands|'
    r"you\s+land|mission|survey|patrol|take[- ]?off|lift[- ]?off)(?:\s+(?:is\s+|has\s+|'s\s+)?"
    r"(?:been\s+)?(?:done|"
    r'finished|finishes|complete|completed|completes|over|ended|ends))?\b'
    # "after waypoint 3 start filming", "after the third waypoint, photo": a mission's item
    rf'|\b(?P<w>after)\s+(?:{WAYPOINT_PATTERN})(?!\s*(?:m|ft)\b)', re.IGNORECASE)
# a comparison at the start of a clause, without a connective: "bat<20", "wind>12 rtl",
# "latency above 500ms", "esc temp > 85"
_HEAD_COMPARISON = re.compile(
    rf"^(?P<q>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){{0,2}}?)\s*(?:<=|>=|=<|=>|≤|≥|==|<|>|"
    r'\s(?:(?:is\s+|are\s+|gets?\s+|goes\s+)?(?:above|over|below|under|exceeds?|more than|'
    r'less than|greater than|lower than|higher than|faster than|slower than|at least|'
    r'at most|past)|at|@)\s)\s*'
    rf'{_MEASURE}', re.IGNORECASE)
# the threshold first, without "at": "20% battery", "30 m up", "10 m/s wind", "35% left"
_HEAD_MEASURE = re.compile(rf"^(?P<v>{_MEASURE})(?P<tail>(?:\s+[a-z][\w'-]*){{0,3}})",
                           re.IGNORECASE)
# a sensed quantity's name and its level before an arrow: "batt 20% -> land", "wind 12 m/s =>
# land" (the arrow of a typed condition; "battery 80%, signal strong" is a report, not one)
_ARROW_LEVEL = re.compile(rf"(?:^|(?<=[;,.:\n]))(?P<s>\s*)(?P<q>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)"
                          rf"{{0,2}}?)\s*{_MEASURE}\s*(?={ARROW})", re.IGNORECASE)
# "within 10 m of 47.39, 8.54 start recording", "within 5m of the launch point -> land"
# a bound first, without a quantity word: "below 30 ft, release", "above 120 m -> descend"
_HEAD_BOUND = re.compile(rf'^(?:below|above|under|over|beyond|past)\s+{_MEASURE}\s*(?=,|$)',
                         re.IGNORECASE)
# the same bound straight before its order, without the comma: "above 100 ft slow to 5 m/s"
_HEAD_BOUND_ORDER = re.compile(rf'^(?:below|above|under|over|beyond|past)\s+{_MEASURE}'
                               r"(?=\s+(?P<verb>[a-z][\w'-]*))", re.IGNORECASE)
_HEAD_PROXIMITY = re.compile(rf'^(?:within|closer\s+than|nearer\s+than|less\s+than|under|at)\s+'
                             rf'{_MEASURE}\s+(?:away\s+)?(?:of|from|to)\b', re.IGNORECASE)
# a trailing threshold of an action that takes none: "turn the spotlight on below 10 m altitude"
_TRAILING = re.compile(rf'(?:\b(?:automatically|only|whenever\s+you\s+are)\s+)?\b(?:below|above|'
                       rf'under|over)\s+{_MEASURE}(?:\s+(?:altitude|height|agl|battery|charge))?'
                       r'\s*$', re.IGNORECASE)
_STATE_HEAD = re.compile(r"^(?:the\s+)?(?:mission|survey|patrol)(?:'s|\s+is|\s+has)?\s*"
                         r'(?:been\s+)?(?:done|finished|complete|completed|over)$', re.IGNORECASE)
_VERB = re.compile(r"[a-z][\w'-]*", re.IGNORECASE)
_ACTIONS = frozenset(ACTION_VERBS)
# verbs that are an order only with something after them ("drop the marker", "slow to 2 m/s")
_NEEDS_OBJECT = frozenset('drop slow set turn start sound record lights spotlight'.split())
_IMPERATIVES = _ACTIONS | {'take', 'snap', 'capture', 'film', 'photograph', 'enable'}
_STEP_VERBS = _IMPERATIVES | _PARAMETER_VERBS | {'run', 'arm', 'check', 'do', 'start'}


_SPEC_OPENING = re.compile(r"^(?:(?:it|the drone|drone|you|the uav)\s+(?:should|must|will|shall|"
                           r"needs?\s+to|has\s+to)\s+)?(?:automatically\s+|auto[- ]?|always\s+)?",
                           re.IGNORECASE)


def _first_verb(text: str) -> str:
    """The verb a clause opens with ("it should turn ..." and "automatically ..." skipped)."""
    text = _SPEC_OPENING.sub('', _strip_filler(text))
    words = _VERB.findall(text.lower())
    if words[:2] == ['take', 'off']:
        return 'takeoff'
    return words[0] if words else ''


def _until_verb(text: str, start: int, most: int = 3) -> int:
    """Where the words after ``start`` end: before a verb, or after ``most`` of them."""
    for m in _VERB.finditer(text, start):
        word = m.group(0).lower()
        noun = re.search(r'\b(?:the|a|an|this|that)\s+$', text[start:m.start()], re.IGNORECASE)
        if ((word in _ACTIONS or word in _PARAMETER_VERBS) and not noun) \
                or len(text[start:m.start()].split()) >= most:
            return len(text[:m.start()].rstrip())
    return len(text.rstrip())


@dataclass(frozen=True)
class _Span:
    start: int
    end: int | None  # None: open (runs to the next cut), like a connective
    marker: str
    condition: bool  # the piece it opens is a condition
    body: int = -1  # where its text starts (after the connective); -1: after the marker word


# "on seeing a person", "upon reaching home", "on link loss": a connective before a noun of
# an event ("on" alone is not one)
_UPON = re.compile(r'\b(?:up)?on\s+(?=(?:seeing|detecting|spotting|finding|noticing|reaching|'
                   r'arriving|arrival|landing|touchdown|touching\s+down|take-?off|'
                   r'(?:signal|link|connection|comms|rc|gps)\s+loss|loss\s+of|'
                   # "on low battery rtl": a failsafe's trigger without a threshold, a condition
                   # the executor refuses with its reason, never an order run at once
                   r'(?:low|critical)\s+(?:battery|batt|voltage|charge|power))\b)',
                   re.IGNORECASE)
# "battery critical -> land", "batt low => rtl": the same trigger before an arrow
_ARROW_TRIGGER = re.compile(r"(?:^|(?<=[;,.:\n]))(?P<s>\s*)(?P<t>(?:the\s+)?(?:battery|batt|bat|"
                            r'voltage|charge|power)\s+(?:is\s+)?(?:low|critical|very\s+low|'
                            rf'dying))\s*(?={ARROW})', re.IGNORECASE)


def _spans(part: str) -> list[_Span]:
    """Every cut of ``part``: connectives (open) and written-out conditions (closed spans)."""
    opened = [_Span(m.start(), None, ' '.join(m.group(1).lower().split()),
                    ' '.join(m.group(1).lower().split()) in CONDITION_MARKERS, m.end())
              for m in _MARKER.finditer(part)]
    opened += [_Span(m.start(), None, 'upon', True, m.end()) for m in _UPON.finditer(part)]
    opened.sort(key=lambda o: o.start)
    closed: list[_Span] = []

    def inside_condition(at: int) -> bool:
        last = [o for o in opened if o.start < at]
        return bool(last) and last[-1].condition

    for m in _TIMED.finditer(part):
        if not inside_condition(m.start()):
            marker = ' '.join((m.group('m') or m.group('at') or '').lower().split())
            closed.append(_Span(m.start(), m.end(), marker, True))
    for m in _IN_TIME.finditer(part):
        lead, tail = part[:m.start()], part[m.end():]
        initial = not _strip_filler(lead).strip(' ,') and not _STATEMENT.search(tail)
        final = not tail.strip(' ,.!') and not _STATEMENT.search(lead)
        if (initial or final) and not inside_condition(m.start()):
            closed.append(_Span(m.start(), m.end(), 'in', True))
    for m in _AT_MEASURE.finditer(part):
        if inside_condition(m.start()) or any(c.start <= m.start() < (c.end or 0)
                                              for c in closed):
            continue
        value = m.group('v').strip()
        unit = re.sub(r'^[-+−\d.,\s]+', '', value)
        initial = not _strip_filler(part[:m.start()]).strip(' ,')
        if re.search(r"\b(?:is|are|was|were|'s|'re|currently|now|still)\s*$", part[:m.start()],
                     re.IGNORECASE):
            continue  # "the battery is at 12 percent": a statement, not a condition
        lead = _strip_filler(part[:m.start()]).strip()
        if lead and len(lead.split()) <= 3 and names_quantity(lead) \
                and _first_verb(lead) not in _ACTIONS | _PARAMETER_VERBS:
            continue  # "battery at 20% -> land": a comparison at the start, read whole
        verb = _first_verb(part[:m.start()])
        away = re.match(r'\s+(?:away\s+)?from\b', part[m.end():], re.IGNORECASE)
        if initial and away:  # "at 5 m from the launch point, land": a distance, read whole
            comma = re.compile(r',(?!\s?[-+−]?\d)').search(part, m.end())  # not in coordinates
            end = comma.start() if comma else _until_verb(part, m.end(), most=8)
            closed.append(_Span(m.start(), end, 'at', True))
            continue
        if initial or (_CONDITION_UNITS.search(value) and verb not in ('set', 'change')) or (
                unit and not _SPEED_UNITS.search(value) and verb not in _PARAMETER_VERBS
                and verb in _IMPERATIVES):
            if not unit and not initial:
                continue
            closed.append(_Span(m.start(), _until_verb(part, m.end()), 'at', True))
    trailing = _TRAILING.search(part)
    if trailing and not any(o.start < trailing.start() for o in opened) \
            and _first_verb(part) in _IMPERATIVES \
            and _first_verb(part) not in _PARAMETER_VERBS:
        closed.append(_Span(trailing.start(), trailing.end(), '', True))
    for event in _AFTER_EVENT.finditer(part):  # at the start or the end of the clause only
        if event.group('w') and re.search(r'\b(?:waypoints?|wps?)\b', part[:event.start()],
                                          re.IGNORECASE):
            continue  # "insert a loiter waypoint after WP 6": a place in the mission, no time
        initial = not _strip_filler(part[:event.start()]).strip(' ,')
        if not initial and re.search(r'(?:take|lift)[- ]?off', event.group(0), re.IGNORECASE):
            continue  # "how high did it climb after takeoff?": a time asked about, no condition
        if initial or not part[event.end():].strip(' ,.!'):
            closed.append(_Span(event.start(), event.end(), 'after', True))
    item = _TRAILING_WAYPOINT.search(part)
    if item and not any(o.start < item.start() for o in opened) \
            and _first_verb(part) in _IMPERATIVES - _PLACE_VERBS \
            and len(_strip_filler(part[:item.start()]).split()) > 1:  # "start at wpt 1": where
        closed.append(_Span(item.start(), item.end(), 'at', True))
    closed.sort(key=lambda c: c.start)
    keep: list[_Span] = []
    for c in closed:  # overlapping spans: the first wins
        if not keep or c.start >= (keep[-1].end or 0):
            keep.append(c)
    spans = [o for o in opened if not any(c.start <= o.start < (c.end or 0) for c in keep)]
    return sorted(spans + keep, key=lambda c: c.start)


# "start mapping at wp 2", "take a photo at the third waypoint": a mission item at the end of an
# order that goes nowhere itself (ANNOTATION.md: "at the third waypoint" is a condition); a
# move, hover or landing "at waypoint 3" is where it goes, and so is a verb without its object
# ("start at wpt 1"): left to the model
_TRAILING_WAYPOINT = re.compile(
    rf'(?:\bat|@)\s*(?:{WAYPOINT_PATTERN})(?!\s*(?:m|ft)\b)\s*[.!]?\s*$', re.IGNORECASE)
_PLACE_VERBS = frozenset('''fly go head move hover hold loiter stay wait navigate travel return
come orbit circle approach reposition goto land park pause stop'''.split())
# "at waypoint 4 lower the winch", "@ wp 3 photo": a mission item, the time of the order
_HEAD_WAYPOINT = re.compile(
    rf'^(?:at|@)\s*(?:{WAYPOINT_PATTERN})(?!\s*(?:m|ft)\b)', re.IGNORECASE)


def _head(piece: str) -> int:
    """Length of a condition written at the start of ``piece`` without a connective (0: none)."""
    m = _HEAD_WAYPOINT.match(piece)
    if m and piece[m.end():].strip(' ,'):
        return m.end()
    m = _HEAD_COMPARISON.match(piece)
    statement = m and re.search(r"(?:\bis|\bare|\bwas|\bwere|'s|'re|\bcurrently|\bnow|\bstill)"
                                r'\s+(?:at|@)\s', m.group(0), re.IGNORECASE)
    if m and not statement and names_quantity(m.group('q')) and m.group('q').split()[0].lower() \
            not in _ACTIONS | _PARAMETER_VERBS:
        return m.end()
    m = _HEAD_MEASURE.match(piece)
    if m:
        end = _until_verb(piece, m.end('v'))
        tail = piece[m.end('v'):end]
        unit = re.sub(r'^[-+−\d.,\s]+', '', m.group('v').strip())
        if unit and (names_quantity(tail) or re.match(r'\s+(?:up|high|agl|left|remaining)\b',
                                                     tail) or _CONDITION_UNITS.search(unit)):
            return end
    m = _HEAD_BOUND.match(piece.strip())
    if m and re.sub(r'^[-+−\d.,\s]+', '', m.group(0).split(None, 1)[1]).strip():
        return len(piece)  # a bound with a unit, alone before the action's comma
    m = _HEAD_BOUND_ORDER.match(piece)
    if m and m.group('verb').lower() in _ACTIONS \
            and re.sub(r'^[-+−\d.,\s]+', '', m.group(0).split(None, 1)[1]).strip():
        return m.end()
    m = _HEAD_PROXIMITY.match(piece)
    if m:
        return _until_verb(piece, m.end(), most=6)
    if _STATE_HEAD.match(piece.strip()):
        return len(piece)
    return 0


@dataclass(frozen=True)
class _Piece:
    """A cut of the request before its roles are settled.

    ``chunk`` numbers the punctuation-delimited chunks, so that a condition can gate the
    actions that share its chunk ("if X, land and disarm"); ``after_but``: the piece opens
    right after a "but" (a condition there gates nothing before it); ``after_step``: it opens
    right after a sequence word ("and", "then": "take off, and if X, land");
    ``after_sentence``: it opens a sentence (after . ; ! ? a line break or an arrow: "take
    off. If the battery drops below 25%, land"); ``after_stop``: the same, an arrow excepted
    (the orders after a typed condition's arrow are its sentence: "bat < 20 -> stop video, rtl").
    """

    marker: str  # the connective that opened it ('': none)
    text: str
    chunk: int
    condition: bool
    after_but: bool = False
    after_step: bool = False
    after_sentence: bool = False
    after_stop: bool = False


_BARE_NUMBER = re.compile(r"(?:^|(?<=\s))(\d)\s+(?=([a-z][\w'-]*))", re.IGNORECASE)


def _bare_steps(text: str) -> str:
    """Steps numbered 1, 2, 3 ... without a mark, each before its verb, cut like marked ones.

    "1 take off 2 run my saved garden patrol 3 record the whole thing 4 come home when the
    patrol is done" had been one clause, gated as a whole by its last step's condition (the
    patrol waited for its own end). Only a run that opens the text with 1 and counts up by one,
    its first two steps opening with a verb; "take 2 photos" is no step.
    """
    found = list(_BARE_NUMBER.finditer(text))
    if not found or found[0].start() != len(text) - len(text.lstrip()) \
            or found[0].group(1) != '1':
        return text
    cuts, want = [], 1
    for m in found:
        # the first two steps open with a verb; from the third the count alone says it
        if int(m.group(1)) == want and (want > 2 or m.group(2).lower() in _STEP_VERBS):
            cuts.append(m)
            want += 1
    if len(cuts) < 2:
        return text
    out, pos = [], 0
    for m in cuts:
        out += [text[pos:m.start()], '; ']
        pos = m.end()
    return ''.join(out + [text[pos:]])


# "when you get a chance", "whenever you have a moment", "when you're ready": politeness,
# not a condition ("When you have a moment, could you fly to the beehives, ..." had gated the
# flight on a condition the executor refuses)
_POLITE_WHEN = re.compile(r"\b(?:when(?:ever)?|once)\s+(?:you\s+(?:get|have|find)\s+(?:a|the)\s+"
                          r"(?:chance|moment|sec|second|minute|min)|you(?:'re|\s+are)\s+ready)"
                          r"\b(?!\s+(?:to|for)\b)\s*", re.IGNORECASE)


# a typed condition before an arrow or a colon, without a connective: "lost link -> hold",
# "Link loss: LAND.", "dog in frame -> siren", "leaving the fence or link weak -> rtl", "sats < 8
# or compass off: hold" (their orders had run at once); what comes first in its sentence
_TYPED = re.compile(rf"(?:^|(?<=[;!?\n])|(?<=\.)(?!\d))(?P<s>\s*)(?P<c>(?:[^.;!?\n:]|\.(?=\d))+?)"
                    rf"\s*(?P<a>{ARROW}|:\s)")
_TYPED_SYMBOL = re.compile(r'[<>≤≥]=?\s*[-+−]?\d')
_COMPARISON_WORD = re.compile(r'[<>≤≥]|\b(?:below|above|over|under|exceeds?|less|more|greater|'
                              r'lower|higher|hotter|colder|faster|slower|least|most|drops?|'
                              r'falls?|reach(?:es)?|hits?|past|beyond|within)\b', re.IGNORECASE)


def _typed_condition(m: re.Match[str]) -> str:
    """``if`` before a typed condition the grammar reads, with no order in it."""
    c = m.group('c').strip()
    if (len(c.split()) > 8 or _MARKER.search(c) or _first_verb(c) in _STEP_VERBS
            or all(p[2] for p in _cut(c)) or re.fullmatch(WAYPOINT_PATTERN, c, re.IGNORECASE)):
        return m.group(0)
    # before a colon a level alone is a report ("battery 80%: fine"), not a condition
    if m.group('a').startswith(':') and re.search(r'\d', c) and not _COMPARISON_WORD.search(c):
        return m.group(0)
    if _TYPED_SYMBOL.search(c) or any(isinstance(parse_condition(f'if {p}'), Predicate)
                                      for p in joined_parts(c)):
        return f"{m.group('s')}if {m.group(0)[len(m.group('s')):]}"
    return m.group(0)


def _arrow_level(m: re.Match[str]) -> str:
    """``if`` before a sensed quantity's level that the grammar reads ("batt 20% -> land")."""
    level = m.group(0).strip()
    if sensed_level(m.group('q')) and isinstance(parse_condition(f'if {level}'), Predicate):
        return f"{m.group('s')}if {level}"
    return m.group(0)


def _pieces(text: str) -> list[_Piece]:
    """The request's pieces in order."""
    pieces: list[_Piece] = []
    text = _bare_steps(_STEP.sub(';', _POLITE_WHEN.sub('', normalise(text))))
    text = _ARROW_LEVEL.sub(_arrow_level, text)
    text = _ARROW_TRIGGER.sub(lambda m: f"{m.group('s')}if {m.group('t')}", text)
    text = _TYPED.sub(_typed_condition, text)
    if _TELLO_RUN.match(text):
        text = '; '.join(m.group(0) for m in _TELLO_ONE.finditer(text))
    # "hover for 30 s, then land": the duration of one action is the delay of the next
    delays = [m.group('d').lower() for m in _FOR_THEN.finditer(text)]
    cuts = [''] + [m.group(0) for m in _PUNCT.finditer(text)]
    chunks = _PUNCT.split(text)
    for n, chunk in enumerate(chunks):
        after_sentence = n > 0 and bool(_SENTENCE_CUT.search(cuts[n]))
        after_stop = n > 0 and bool(_STOP_CUT.search(cuts[n]))
        # "follow the runner and, if she leaves the geofence, stop": the step word before the
        # comma opens this chunk's step
        stepped = n > 0 and bool(_STEP_END.search(chunks[n - 1]))
        for j, side in enumerate(_BUT.split(chunk)):
            after_but = j > 0
            for i, part in enumerate(_SEPARATOR.split(side)):
                after_step = i > 0 or (stepped and i == 0 and j == 0)
                for run in _run_on(part.strip()) if part.strip() else []:
                    for m, t, c in _cut(run):
                        pieces.append(_Piece(m, t, n, c, after_but, after_step, after_sentence,
                                             after_stop))
                        after_but = after_step = after_sentence = after_stop = False
    out: list[_Piece] = []
    for k, piece in enumerate(pieces):
        out.append(piece)
        ended = next((d for d in delays if not piece.condition
                      and piece.text.lower().endswith(d)), '')
        if ended and k + 1 < len(pieces):
            delays.remove(ended)
            out.append(_Piece('for', piece.text[len(piece.text) - len(ended):], piece.chunk,
                              True))
    return out


def _cut(part: str) -> list[tuple[str, str, bool]]:
    out: list[tuple[str, str, bool]] = []
    start, marker, condition, skip = 0, '', False, False
    for span in _spans(part):
        before = part[start:span.start].strip()
        if before:
            out.append((marker, before, condition))
        elif marker and span.end is None and not skip:
            # two connectives in a row ("once when ..."): keep the first
            continue
        if span.end is None:
            marker, condition, skip, start = span.marker, span.condition, False, span.body
        else:
            body_at = span.start + len(span.marker) if span.marker and part[span.start:].lower() \
                .startswith(span.marker) else span.start
            body = part[body_at:span.end].strip(' @')
            if body:
                out.append((span.marker, body, True))
            marker, condition, start, skip = '', False, span.end, True
    rest = part[start:].strip()
    if rest:
        out.append((marker, rest, condition))
    # a condition written at the start of a piece without a connective: "bat<20 land"
    final: list[tuple[str, str, bool]] = []
    for marker, text, condition in out:
        body = _strip_filler(text)
        if not marker and not condition:
            if re.match(r'should\s', body, re.IGNORECASE):
                final.append(('should', body[6:].strip(), True))
                continue
            at = _head(body)
            if at:
                head, rest = body[:at].strip(), body[at:].strip(' ,')
                final.append(('', head, True))
                if rest:
                    final.append(('', rest, False))
                continue
        final.append((marker, text, condition))
    return final


# -- runs of orders typed without punctuation ("tilt cam down start rec fly fwd 10m") ---------
# Operators chain orders with nothing between them; one clause holding three orders is scored as
# one, and lcr lost one of its tools in 14 such runs of pubw6. A run is cut before each order
# that opens after a finished one. Verbs that are seldom nouns open an order after any word but
# a function word; verbs that are often nouns ("land", "map", "scan", "photo") only after a
# number or unit, a direction, a place's id ("pad B", "wp3"), or an order complete in one word
# ("hover land").
_RUN_VERBS = frozenset("""takeoff take fly go climb descend ascend disarm hover rtl rth rtb
follow yaw rotate start stop keep snap come move proceed navigate zoom pan play announce
broadcast""".split())
_RUN_NOUN_VERBS = frozenset("""land map scan photo pic picture record rec stream survey search
count sample drop release return lower raise turn head circle hold grab film shoot spotlight
orbit arm tilt""".split())
_RUN_ONE_WORD = frozenset('takeoff hover land disarm arm rtl rth rtb photo pic'.split())
_RUN_DIRECTIONS = frozenset("""up down left right fwd forward back backward backwards north south
east west home off it them there here now""".split())
_RUN_MOVES = frozenset('up down left right fwd forward back'.split())  # "up 20m": with a number
_RUN_SETTINGS = frozenset('speed alt altitude height heading'.split())  # "speed 4 ms climb 15"
_RUN_NUMBER = re.compile(r'^[-+]?\d[\d.,]*[a-z%°/]*$|^(?:m|ft|s|sec|secs|seconds|meters|metres|'
                         r'feet|mph|kph|km/h|kmh|m/s|ms|mps|kts|knots|deg|degrees|%|percent|cm|'
                         r'radius)$')
_RUN_UNIT = re.compile(r'^[-+]?\d[\d.,]*\s?(?:m|ft|cm|meters|metres|feet)\b')  # "left 10 ft"
_RUN_ID = re.compile(r'^(?:[b-hj-z]|[a-z]{1,4}\d+)$')  # "pad B", "WP5" (not "a", "i")
# an object's id as written: "PanelB", "Building4", "tower_07" (a place ends there)
_RUN_NAME = re.compile(r'^(?:[A-Z][a-z]+[A-Z0-9]\w*|[a-z]+_\w+)$')
# words before a run's first order: "precision land on the dock disarm"
_RUN_LEAD = frozenset('precision please pls now then quickly slowly just ok okay'.split())
_RUN_PLACE_LEAD = frozenset('the to at over'.split())  # "to the Silo", "over Westgate"
_RUN_WHERE = frozenset('on at there now'.split())  # "land on dock": a landing after any noun
# the orders that may end a run ("... drop package rtl"); any other last word is a noun
_RUN_LAST = _RUN_ONE_WORD | frozenset(
    'follow stream record rec release descend climb return'.split())


def _run_on(part: str) -> list[str]:
    """``part`` cut before each order of an unpunctuated run, or ``[part]``."""
    words = part.split()
    lowered = [w.lower().strip('"\'') for w in words]
    first = 1 if lowered and lowered[0] in _RUN_LEAD else 0
    if len(words) < 3 or not _opens_order(lowered, first) or _spans(part) \
            or _head(_strip_filler(part)):
        return [part]
    cuts: list[int] = []
    # "fly to the Silo orbit twice": a capitalised name after "the" ends a place, unless the
    # run is written in capitals throughout ("Fly To The Silo")
    title = sum(w[:1].isupper() for w in words[1:]) * 2 > len(words) - 1
    for k in range(first + 1, len(words)):
        if lowered[k] == 'n' and k + 1 < len(words):  # "keep the camera on it n stream"
            cuts.append(k)
            continue
        before, word = lowered[k - 1], lowered[k]
        if before == 'n' or not _opens_order(lowered, k):
            continue
        if k == len(words) - 1 and word not in _RUN_LAST:
            continue  # "fly to the bus stop": a last word is a noun unless an order alone
        if (k == first + 1 or k - 1 in cuts) and before not in _RUN_ONE_WORD:
            continue  # "start rec", "go fly", "take off": the order's own words
        finished = (_RUN_NUMBER.match(before) is not None or before in _RUN_DIRECTIONS
                    or before in _RUN_ONE_WORD or _RUN_ID.match(before) is not None
                    or _RUN_NAME.match(words[k - 1].strip('"\'')) is not None
                    or (k >= 2 and lowered[k - 2] in _RUN_PLACE_LEAD and not title
                        and re.match(r'^[A-Z][a-z]+$', words[k - 1]) is not None))
        if word in _RUN_MOVES and not (before in _RUN_ONE_WORD or (
                _RUN_NUMBER.match(before) and _RUN_UNIT.search(' '.join(lowered[k + 1:k + 3])))):
            continue  # "tilt the camera down 45", "fly 2 m forward": the order's direction
        if word in _RUN_NOUN_VERBS and not finished \
                and not (word == 'land' and k + 1 < len(words) and lowered[k + 1] in _RUN_WHERE):
            continue
        if before in _SUBJECTS and not finished:
            continue  # "to fly", "we land"
        if word in ('alt', 'altitude', 'height') and before in ('takeoff', 'off'):
            continue  # "takeoff alt 15": the takeoff's own height (ANNOTATION.md)
        cuts.append(k)
    opened = [lowered[k] for k in [first] + cuts]
    if not cuts or len(set(opened)) < len(opened):
        return [part]  # none, or an order said twice: emphasis ("COME BACK COME BACK"), one
    pieces, start = [], 0
    for k in cuts + [len(words)]:
        piece = [w for w, low in zip(words[start:k], lowered[start:k]) if low != 'n']
        if piece:
            pieces.append(' '.join(piece))
        start = k
    return pieces


def _opens_order(words: list[str], k: int) -> bool:
    """Whether ``words[k]`` opens an order ("face" only before where it faces)."""
    word, after = words[k], words[k + 1] if k + 1 < len(words) else ''
    if word == 'take':
        return after in ('off', 'a', 'an', 'photo', 'photos', 'pic', 'pics', 'picture', 'video',
                         'shot', 'shots', 'snapshot', 'snap', 'sample', 'samples')
    if word == 'face':
        return after in _RUN_DIRECTIONS or after in ('the', 'towards', 'toward') \
            or _RUN_NUMBER.match(after) is not None
    if word in _RUN_MOVES or word in _RUN_SETTINGS:
        return k + 1 < len(words) and _RUN_NUMBER.match(after) is not None and after not in (
            'm', 'ft', 's') and bool(re.match(r'[-+]?\d', after))
    return word in _RUN_VERBS or word in _RUN_NOUN_VERBS


# "if not", "if so": a condition on the answer to the question before it, one word long
_ANSWERS = frozenset({'not', 'so', 'yes', 'no'})


# "if under 10 m/s arm and launch": two orders that are nouns as often as verbs elsewhere ("the
# arm", "at launch") open an order after a condition's last word (never after "the", "at", ...)
_GLUED_ORDERS = _ACTIONS | {'arm', 'launch'}


def _split_glued_action(marker: str, piece: str, condition: bool) -> list[tuple[str, str, bool]]:
    """Cut a condition piece before an imperative verb that follows it without punctuation.

    The condition keeps at least two words ("once airborne start recording": one, when that
    word is a condition of its own), and a verb followed by a comparison stays in it.
    """
    if not condition:
        return [(marker, piece, condition)]
    tokens = piece.split()
    for k in range(1, len(tokens)):
        word = tokens[k].lower().strip('"\'')
        answer = k == 1 and tokens[0].lower() in _ANSWERS  # "if not start the video"
        if word not in _GLUED_ORDERS or (tokens[k - 1].lower() in _SUBJECTS and not answer):
            continue
        if word not in _ACTIONS and not re.match(r'(?:(?:it|the|motors?|and|then|now)\b|$)',
                                                 ' '.join(tokens[k + 1:2 + k]).lower()):
            continue  # "if the crane arm swings close": a noun
        if _COMPARED.match(' '.join(tokens[k + 1:])):
            continue
        if word in _NEEDS_OBJECT and k == len(tokens) - 1:
            continue  # "should the link drop": the condition's verb, not an order
        if k == 1 and not watchable(tokens[0]) and not answer:
            continue
        return [(marker, ' '.join(tokens[:k]), True), ('', ' '.join(tokens[k:]), False)]
    return [(marker, piece, condition)]


# "record while you land", "film while it orbits the tower": the vehicle's own order, at once
_WHILE_ORDER = re.compile(
    r"^(?:you|we|it|u|the\s+(?:drone|vehicle|quad|aircraft))(?:'re|\s+are|\s+is|'s)?\s+"
    r'(?:land|lands|landing|orbit|orbits|orbiting|circle|circles|circling|follow|follows|'
    r'following|descend|descends|descending|climb|climbs|climbing|return|returns|returning|'
    r'come\s+(?:home|back|down)|comes\s+(?:home|back|down)|coming\s+(?:home|back|down))\b',
    re.IGNORECASE)


def split_clauses(text: str) -> list[Clause]:
    """The request's clauses in order, with roles, negation and gating conditions.

    The router's rules each read the clauses of the same screened text (about three readings a
    route): the last texts' clauses are kept (the records are frozen; each call gets its own list).
    """
    return list(_split_clauses(text))


@lru_cache(maxsize=256)
def _split_clauses(text: str) -> tuple[Clause, ...]:
    clauses: list[Clause] = []
    pending_condition = ''
    gated_chunk = -1  # the chunk whose actions the last consumed condition gates
    gating = ''
    back: int | None = None  # the action before the pending condition that it gates too
    last_chunk = -1
    contrast: set[int] = set()  # the pieces whose condition gates nothing before them
    steps: set[int] = set()
    sentences: set[int] = set()
    inherited: set[int] = set()  # actions gated by the condition of the order before them
    # a condition that leads its orders gates every order of the sentence they share: "if the
    # wind exceeds 10 m/s, stop filming, land" lands on the wind too (the landing had run at
    # once); the sentence of the first order it gates, and the number of each piece's sentence
    gated_sentence = -1
    stops: set[int] = set()
    leading = -1  # the sentence of the condition that waits for its first order (-1: none)
    pieces: list[tuple[tuple[str, str, bool], int]] = []
    for cut in _pieces(text):
        if cut.after_but:
            contrast.add(len(pieces))
        if cut.after_step:
            steps.add(len(pieces))
        if cut.after_sentence:
            sentences.add(len(pieces))
        if cut.after_stop:
            stops.add(len(pieces))
        pieces += [(p, cut.chunk) for p in _split_glued_action(cut.marker, cut.text,
                                                                cut.condition)]
    pieces = _unconditional_should(pieces)
    sentence_of = list(accumulate(k in stops for k in range(len(pieces))))
    # "take off, and if the wind gets above 10 m/s, land", "take off and after 3 minutes
    # land": a condition that opens a step of its own after "and"/"then" and leads an order of
    # its own gates that order, never the one before it (the takeoff had waited for the wind)
    contrast |= {k for k in steps | sentences if k < len(pieces) and pieces[k][0][2]
                 and any(not p[2] for p, _ in pieces[k + 1:])}
    # so does one that opens its chunk and holds its order in it: "wind check, if under 10 m/s
    # arm and launch" ("land, if the battery is low" has no order of its own: the landing waits)
    contrast |= {k for k in range(1, len(pieces)) if pieces[k][0][2]
                 and pieces[k - 1][1] != pieces[k][1]
                 and any(not p[2] and n == pieces[k][1] for p, n in pieces[k + 1:])}
    for k, ((marker, piece, condition), chunk) in enumerate(pieces):
        # "if so": a condition on the question's answer, never a filler "so" stripped to nothing;
        # after a condition ("see if anyone's there and, if so, ...") it is that condition's
        answer = condition and piece.strip().lower() in _ANSWERS
        if answer and clauses and clauses[-1].role == 'condition':
            continue
        body = piece.strip() if answer else _strip_filler(piece)
        if not body or not re.search(r'[A-Za-z0-9]', body) or _BARE_STEP.match(body):
            continue
        if marker in ('while', 'before') and watchable(body):
            condition = True  # "keep recording while the wind is under 8 m/s"
        if marker == 'while' and _WHILE_ORDER.match(body):
            condition = False  # "record while you land": two orders at once, no condition
        role = 'condition' if condition else 'action'
        negated = bool(NEGATIONS.search(body))
        gate = ''
        if role == 'condition':
            # the executor reads the connective too ("unless" and "until" are not "when")
            text_of = f'{marker} {body}'.strip()
            if clauses and clauses[-1].role == 'condition' and chunk == last_chunk \
                    and pending_condition:
                # "if the battery is below 20% and the wind above 10 m/s": one condition of
                # two, which the executor refuses, never one of them alone
                text_of = f'{pending_condition} and {text_of}'
                if back is not None:
                    clauses[back] = replace(clauses[back], condition=text_of)
            pending_condition = text_of
            # only a condition that states when (not "unless", "until", "while", "before", nor
            # the duration of one order: "hover for a minute, then lower the line, then ...")
            leading = sentence_of[k] if marker not in _NOT_CARRIED else -1
            # An action clause that precedes its condition ("land if X") is gated too; so is
            # one before "until"/"while"/"before" X when X is watchable ("hover until the
            # battery hits 30%"): the executor refuses it rather than run it without its end.
            # The duration of an action ("hover for 30 s, then land") gates only the next one.
            back = None
            if (
                clauses
                and clauses[-1].role == 'action'
                # an order's own condition after it wins over one it inherited: "follow me if I
                # run, and land if the battery goes below 25" lands on the battery, not the run
                and (not clauses[-1].condition or len(clauses) - 1 in inherited)
                and marker != 'for'
                and body.lower() not in _ANSWERS  # "is it on? if so, ...": the question is not
                and k not in contrast  # "keep filming, but if X, stop": the filming is not
                and (marker not in ('until', 'till') or watchable(body))
            ):
                clauses[-1] = replace(clauses[-1], condition=pending_condition)
                back = len(clauses) - 1
            gated_chunk = gated_sentence = -1
        elif pending_condition:
            gate, pending_condition = pending_condition, ''
            gated_chunk, gating = chunk, gate
            if back is not None:
                inherited.add(len(clauses))  # its condition was the order's before it
            elif leading == sentence_of[k]:  # it led this order: it gates its sentence's rest
                gated_sentence = leading
        elif chunk == gated_chunk:
            gate = gating  # "if X, land and disarm": both actions wait for X
        elif sentence_of[k] == gated_sentence and not _OTHERWISE.match(body):
            gate = gating  # "if X, stop filming, land": so do both here
            inherited.add(len(clauses))  # an own condition after it wins ("..., land when Y")
        steering = bool(STEERING.search(body))
        clauses.append(Clause(len(clauses), body, role, marker, negated, gate, steering,
                              role == 'condition' and time_only(f'{marker} {body}')))
        last_chunk = chunk
    return tuple(clauses)


# conditions that gate only the order they lead: a bound ("unless", "until", "while",
# "before") or the duration of one order ("for", "wait")
_NOT_CARRIED = frozenset(('unless', 'until', 'till', 'while', 'before', 'for', 'wait'))
# the other branch of a condition ("don't launch, else take off") is not gated by it
_OTHERWISE = re.compile(r'(?:else|otherwise|if\s+not)\b', re.IGNORECASE)


def _unconditional_should(
    pieces: list[tuple[tuple[str, str, bool], int]]
) -> list[tuple[tuple[str, str, bool], int]]:
    """A "should ..." piece with no action anywhere else is a question, not a condition."""
    if any(p[0] == 'should' for p, _ in pieces) and not any(not p[2] for p, _ in pieces):
        return [((('', f'should {p[1]}', False) if p[0] == 'should' else p), n)
                for p, n in pieces]
    return pieces


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

"""Questions never act: a clause that asks about a state is answered by a sensor, not an actuator.

ANNOTATION.md: "A question about a state is answered by the sensor that reads it, never by the
actuator that changes it ... A polite order phrased as a question ("can you take off?") is still
an order." The embedding policies read "is the spotlight on?" close to ``spotlight`` and "how far
are we from home?" close to ``return_to_home``: the words of the state are the actuator's words.
So every policy's answer passes through :func:`answer_questions` in the router
(:meth:`tool_router.routing.router.Router.route`), after the policy and before the allowlist:

1. :func:`clause_moods` reads the mood of each clause of the request (the clauses of
   :func:`tool_router.common.clauses.split_clauses`, with the words the splitter strips from
   their front, "can you", "could you", put back): a **question** (a wh-question, "is / are /
   has / did the ...", "how much / far / high ...", an indirect one, "tell me whether ...",
   "check if ...", "not sure if ...", a clause that ends in "?" and opens with no order verb,
   or one with no question's words that still asks: "winch status", "report gimbal angle",
   "armed or disarmed"; docs/CONVENTIONS.md lists every shape), an **order**
   ("can you land now?", "could you take a photo?", "would you return home please", "how about
   landing", "why don't you ...") or neither (a plain order or a statement). Pure: text in,
   moods out, no model.
2. An actuator the policy chose from a question clause is dropped; when no sensor of that
   clause is left, the sensor that reads the dropped actuator's state takes its place
   (:data:`STATE_SENSORS`, derived from the catalog's descriptions; a quantity the clause names,
   "how high", "how fast", "how far", "heading", picks its sensor first: :data:`CUES`). "how do
   I ..." is advice (out of scope): the actuator is dropped and nothing is added.
3. Per clause: "what's the battery and then land" still lands (the "land" clause is an order).
   Which clause chose a tool is read from the policy's evidence (the fragment it came from),
   else from the words the clause shares with the tool's name, keywords and summary; an actuator
   whose clause cannot be told is kept unless every clause of the request is a question.

Each drop is reported in the route's explanation (``Explanation.questions``: the tool, the
clause, the reason and the sensor that answers instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from tool_router.common.catalog import Catalog, Kind
from tool_router.common.clauses import ACTION_VERBS, Clause, normalise, split_clauses
from tool_router.routing.flight_modes import MAPPED, UNMAPPED
from tool_router.common.explanation import QuestionDrop
from tool_router.routing.policies.base import Decision, Evidence, content_words

# The sensor that reads each actuator's state, from the catalog's descriptions: vehicle_state
# reports armed / landed / airborne, the flight mode (holding, returning, orbiting, following,
# mission and mapping progress) and payload status (recording, light, winch, payload, speaker:
# docs/CONVENTIONS.md); the moves' own quantities have their sensors.
STATE_SENSORS: dict[str, str] = {
    'arm_motors': 'vehicle_state',
    'disarm_motors': 'vehicle_state',
    'takeoff': 'vehicle_state',
    'land': 'vehicle_state',
    'precision_landing': 'vehicle_state',
    'return_to_home': 'vehicle_state',
    'hold_position': 'vehicle_state',
    'goto_waypoint': 'gps_position',
    'execute_mission': 'vehicle_state',
    'set_altitude': 'altitude_sensor',
    'set_speed': 'velocity_estimate',
    'set_heading': 'compass_heading',
    'orbit_point': 'vehicle_state',
    'follow_target': 'vehicle_state',
    'area_mapping': 'vehicle_state',
    'gimbal_control': 'vehicle_state',
    'video_recorder': 'vehicle_state',
    'payload_release': 'vehicle_state',
    'winch_control': 'vehicle_state',
    'spotlight': 'vehicle_state',
    'speaker_broadcast': 'vehicle_state',
    'emergency_stop': 'vehicle_state',
}

# A quantity the question names picks its sensor before the table (ANNOTATION.md rule 5 and
# its clarifications: bare height -> altitude_sensor, position / distance -> gps_position).
CUES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:above (?:mean )?sea level|amsl|msl)\b"), 'gps_position'),
    (re.compile(r"\bhow (?:high|low)\b|\baltitude\b|\bheight\b|\bagl\b|\belevation\b"),
     'altitude_sensor'),
    (re.compile(r"\bhow (?:fast|quick(?:ly)?|slow(?:ly)?)\b|\bspeed\b|\bvelocity\b|"
                r"\bgroundspeed\b|\bm/s\b|\bkm/?h\b|\bmph\b|\bknots\b"), 'velocity_estimate'),
    (re.compile(r"\bhow (?:far|close|near)\b(?!\s+(?:through|along|into|in)\b)|\bdist(?:ance)?\b|"
                r"\bwhere\b|\bposition\b|\bcoordinates?\b|\blocation\b|\blat(?:itude)?\b|"
                r"\bgps\b|\bhow many (?:metres|meters|feet|km|kilometres|kilometers|miles)\b"),
     'gps_position'),
    (re.compile(r"\bheading\b(?!\s+(?:home|back|to|for|towards?|over|out|in|up|down|off)\b)|"
                r"\bfacing\b|\bcompass\b|\bbearing\b|\bwhich way\b(?!.*\bcamera\b)|"
                r"\bwhat direction\b(?!.*\bcamera\b)"), 'compass_heading'),
)

# Payload and motor actuators: their state is vehicle_state's whatever the question's words ("how
# far down is the hook?" asks about the winch, not the vehicle's position).
NO_CUES = frozenset({'arm_motors', 'disarm_motors', 'gimbal_control', 'video_recorder',
                     'payload_release', 'winch_control', 'spotlight', 'speaker_broadcast',
                     'emergency_stop'})

QUESTION, ORDER, OTHER = 'question', 'order', 'other'

# Actuators the question probe never drops: only the rules' reading of the words does.
PROBE_KEEPS = frozenset({'emergency_stop'})

_WH = (r"(?:what|what's|whats|wat|wats|wht|waht|where|where's|wheres|which|how|how's|hows|howz|"
       r"who|who's|whose|why|whats)")
_AUX = r"(?:is|isn't|are|aren't|was|wasn't|were|weren't|has|hasn't|had|hadn't|am|iz|r|ain't)"
# "didn't / does" ask before their subject ("does the winch work"), not before a verb ("... and
# doesn't know help is coming"); a positive "did" asks before anything (clause_mood)
_AUX_DO = r"(?:didn't|does|doesn't)"
_SUBJECT = (r"(?:the|it|its|it's|we|you|u|i|they|he|she|that|this|these|those|my|our|your|ur|"
            r"their|his|her|any|anything|anyone|anybody|everything|everyone|a|an|both|all|"
            r"there|someone|something|each|either|[a-z]+'s)")
# "have" and "do" ask only before a person ("have we landed", "do we have lock"); before anything
# else they order ("have the quad follow me", "do a figure eight").
_AUX_PERSON = r"(?:have|haven't|do|don't)"
_PERSON = r"(?:we|you|u|ya|i|they|y'all)"
_MODAL = (r"(?:can|could|would|will|can't|cannot|couldn't|won't|wouldn't|shall|may|might|"
          r"cn|cud|wud|cld)")
# Verbs that ask for information after a modal ("can you tell me ...", "could you check whether
# ..."): the clause is a question about what follows.
_INFO = (r"(?:tell\s+(?:me|us)|check|confirm|verify|see|show\s+(?:me|us)|report|"
         r"let\s+(?:me|us)\s+know|find\s+out|read|double[- ]?check|look\s+up|remind\s+me|"
         r"update\s+me)")
_FILLER = re.compile(
    r"^(?:(?:just checking|just confirming|just to (?:check|confirm)|sanity check|quick check|"
    r"checking in|"
    r"hey|hi|hello|ok|okay|so|um+|uh+|er+|and|also|then|now|oh|well|alright|right|quick one|quick|"
    r"quick question|question|sorry|excuse me|drone|buddy|mate|pilot|copter|quad|just|btw|"
    r"by the way|one more thing|and then|after that|yo)\b[\s,:-]*)+"
)
_POLITE = re.compile(
    r"^(?:please\s+|pls\s+|plz\s+|kindly\s+)?(?:"
    r"(?:would|do)\s+(?:you|u|ya)\s+mind\b|"
    r"would\s+it\s+be\s+(?:possible|ok|okay|alright)\b|"
    r"(?:is|would)\s+it\s+(?:be\s+)?possible\s+(?:for\s+(?:you|the\s+\w+|it)\s+)?to\b|"
    r"(?:are|r)\s+(?:you|u)\s+able\s+to\b|"
    r"is\s+there\s+(?:any\s+)?(?:way|chance)\b|"
    r"(?:any\s+chance|(?:(?:you|u|ya)\s+)?mind)\b|"
    r"(?:how|what)\s+about\s+(?!the\b|our\b|my\b|its?\b|your\b)\w+ing\b|"
    # "how about you come home now", "what about we land here"
    r"(?:how|what)\s+about\s+(?:you|u|ya|we)\s+(?!\w+ing\b)[a-z]|"
    # "think you could bring it down?", "do you reckon you can land"
    r"(?:(?:do\s+)?(?:you|u)\s+)?(?:think|reckon)\s+(?:you|u|ya)\s+(?:could|can|might)\b|"
    r"why\s+(?:don't|dont|do\s+not|not)\b|"
    r"i\s+(?:would|'d)\s+like\s+(?:you\s+to|to\s+(?!know\b))|"
    r"i\s+(?:want|need)\s+(?:you\s+to|to\s+(?!know\b))|"
    r"what\s+(?:i|we)(?:'d|\s+would)?\s+(?:really\s+|actually\s+)?(?:like|need|want)\b|"
    r"let's\b|lets\b)"
)
_HOWTO = re.compile(r"^how\s+(?:do|can|should|would|could|does)\s+(?:i|we|you|one|u)\s+"
                    r"(?!(?:look|stand|do)\b)")
_UNSURE = (r"(?:(?:(?:i'm|im|i\s+am)\s+)?(?:not\s+sure|unsure|uncertain)|no\s+(?:idea|clue)|"
           r"(?:i\s+)?(?:can't|cant|cannot|can\s+not)\s+(?:tell|see|say)|"
           r"(?:i\s+)?need\s+to\s+know)")
_INDIRECT = re.compile(
    r"^(?:(?:please\s+)?(?:tell\s+me|let\s+me\s+know|lemme\s+know|show\s+me|remind\s+me|"
    r"update\s+me(?:\s+on)?|give\s+me\s+an\s+update\s+on|report|confirm|verify|check|"
    r"double[- ]?check|find\s+out|see)\s+"
    r"(?:if|whether|what|how|where|which|who|when|that)\b|"
    r"i\s+(?:wonder|was\s+wondering|am\s+wondering|'m\s+wondering|want\s+to\s+know|"
    r"would\s+like\s+to\s+know|'d\s+like\s+to\s+know|need\s+to\s+know)\b|"
    r"(?:wondering|curious)\s+(?:if|whether|what|how|where)\b|"
    # "checking if return home got cancelled", "i'm checking whether we're recording"
    r"(?:i'm\s+|im\s+|i\s+am\s+|just\s+)?checking\s+(?:if|whether)\b|"
    r"(?:do|d'you)\s+(?:you|u)\s+know\s+(?:if|whether|what|how|where|which|when)\b|"
    r"any\s+idea\s+(?:if|whether|what|how|where|which|when)\b|"
    # what the operator cannot tell: "not sure if ...", "no idea whether ...", "can't tell if"
    rf"{_UNSURE}\s+(?:if|whether|what|how|where|which|when)\b|"
    # "any update on the landing", "status of the winch"
    r"(?:any\s+)?(?:update|updates|news|word|status)\s+(?:on|about|of|regarding)\b|"
    # "whether rtl engaged, need to know", "any sign it has landed", someone else asking
    r"whether\b|any\s+(?:sign|signs|indication|confirmation)\b|"
    # radio style: "we good on the winch", "confirm you are airborne", "confirm holding position"
    r"(?:are\s+)?we\s+(?:good|ok|okay|set|clear)\s+(?:on|with|for)\b|"
    r"(?:confirm|verify)\s+(?:that\s+)?(?:(?:you|we|it|they|the\s+[\w-]+|[\w-]+)\s+"
    r"(?:is|are|was|were|has|have|had|still|'re|'s)\b|you're\b|[a-z]+ing\s+\S)|"
    r"(?:the\s+|my\s+|our\s+)?[a-z]+\s+(?:wants|needs|would\s+like|asks|is\s+asking)\s+"
    r"(?:to\s+know\s+)?(?:if|whether|what|how|where|when)\b)"
)
# "just checking it actually landed": checking that a subject did something (the filler strip
# would leave "it actually landed", a statement)
_CHECKING = re.compile(
    r"^(?:i'm\s+|im\s+|i\s+am\s+|just\s+)?checking\s+(?:that\s+)?(?:it|we|you|they|she|he|"
    r"the\s+[\w-]+)\s+(?:actually\s+|really\s+|has\s+|have\s+|is\s+|are\s+|did\s+)?"
    r"[a-z]+(?:ed|en|ing)\b")
# A bare verb of information whose object is the condition clause after it ("check if the winch
# is up", "let me know whether we're recording"): the two together are one indirect question.
_BARE_INFO = re.compile(
    rf"^(?:(?:please\s+)?(?:{_MODAL}\s+(?:you|u|ya)\s+(?:please\s+)?)?"
    rf"(?:tell\s+me|let\s+me\s+know|lemme\s+know|check|confirm|verify|see|find\s+out|"
    rf"double[- ]?check|report|i\s+wonder|i'm\s+wondering|wondering|do\s+you\s+know|"
    rf"any\s+idea|"
    rf"(?:i'm\s+|im\s+|i\s+am\s+|just\s+)?checking|"
    rf"{_UNSURE}|(?:the\s+|my\s+|our\s+)?[a-z]+\s+(?:asks|is\s+asking|wants\s+to\s+know|"
    rf"needs\s+to\s+know)))$"
)
_ORDER_VERBS = frozenset(ACTION_VERBS) | frozenset(
    """arm rise ascend lift launch move rotate yaw spin face point tilt pan aim zoom circle
    track map survey patrol sweep search look find count detect measure check read report
    shut light play say tell show open close lower raise reel winch drop deliver release
    pick get give make do have put park loiter rtl rth wait stay keep continue cancel
    engage enable disable lock unlock switch change increase decrease speed accelerate
    return navigate proceed approach circle""".split())
_WORD = re.compile(r"[a-z0-9][a-z0-9'/-]*")
# A state in a few words: a name and the state it is in, asked ("e-stop active?", "rtl engaged?",
# "lights on right now?"): the name may be an order verb's ("rtl", "lights"), the state word at
# the end is what makes it a question. Opening with a verb that orders a state ("turn lights
# on?", "switch ... off?") keeps it an order.
_STATE_WORDS = frozenset(
    """on off active inactive engaged disengaged enabled disabled armed disarmed running done
    finished complete completed up down out open closed stopped working locked unlocked lit
    triggered deployed released attached detached playing recording ok okay live""".split())
_TRAILING_TIME = re.compile(r"(?:\s+(?:right\s+now|now|yet|still|already|at\s+the\s+moment|"
                            r"currently|atm|rn))+$")
_SETS_A_STATE = frozenset(
    "turn switch set put get make keep bring leave have go move start stop".split())
# The auxiliary and subject of a question tag ("isn't it", "aren't you", "did they")
_TAG_NEGATIVE = (r"(?:isn't|aren't|wasn't|weren't|hasn't|haven't|hadn't|didn't|doesn't|don't|"
                 r"won't|wouldn't|can't|couldn't|ain't)")
_TAG_AUX = rf"(?:{_TAG_NEGATIVE}|is|are|was|has|have|did|does|will)"
_TAG_SUBJECT = r"(?:it|you|u|they|we|he|she|that|there)"
# A statement that opens with its subject and verb: "it's on the ground", "you've landed", "the
# winch is down"
_SUBJECT_VERB = re.compile(
    r"^(?:(?:it's|it\s+is|its)(?!\s+(?:time|high\s+time|about\s+time)\b)|it\s+has|it\s+was|"
    r"you're|you\s+are|you've|you\s+have|we're|we\s+are|we've|we\s+have|they're|they've|he's|"
    r"she's|"
    r"(?:the|our|my|its|your)\s+(?:[\w-]+\s+){0,3}?(?:is|are|has|have|was|were))\b")
# A question tag after a statement: "the motors are stopped, right?"
_TAG = re.compile(r"^(?:right|yes|yeah|yep|correct|no|true|innit|"
                  rf"{_TAG_AUX}\s+{_TAG_SUBJECT})$")
# The same tag closing its statement with no mark between: "it's headed back isn't it", "you've
# landed haven't you" (a negative tag), "it's on the ground now right" (after a statement that
# opens with its subject and verb: :data:`_SUBJECT_VERB`)
_CLOSING_TAG = re.compile(rf"\s(?:{_TAG_NEGATIVE}\s+{_TAG_SUBJECT}|right|correct|yeah|innit)$")
_NEGATIVE_TAG = re.compile(rf"^{_TAG_NEGATIVE}\s+{_TAG_SUBJECT}$")
_NEGATION_FIRST = re.compile(r"^(?:don't|dont|do\s+not|not|never|no)\b")
# A status asked for as a noun phrase: "winch status", "rth status", "mapping progress"; no order
# of the catalog ends in these words.
_STATUS_NOUNS = frozenset("status state progress readout reading readings eta".split())
# An order to report: its object is what the operator wants to know ("report gimbal angle",
# "give me the landing state", "tell me the winch position").
_REPORT = re.compile(r"^(?:report(?!\s+(?:to|back|in)\b)|read\s+(?:out|back|me)|say|state|"
                     r"(?:tell|give|send|get|show)\s+(?:me|us)|update\s+(?:me|us)\s+on|"
                     r"i\s+(?:need|want|would\s+like|'d\s+like)\s+(?:to\s+know\s+)?(?:the|our|its))\b")
_MEASURES = _STATUS_NOUNS | frozenset(
    """angle position level height altitude speed heading distance pitch tilt setting settings
    mode bearing temperature length""".split())
# The quantities no order sets by naming them: "gimbal angle pls" asks, "GUIDED mode", "hold
# position", "gain some altitude" order
_READ_ONLY = _STATUS_NOUNS | frozenset("angle pitch tilt length temperature distance".split())
# A quantity named after what it belongs to or which value it is, no verb and no number:
# "target altitude", "current speed setting", "orbit radius", "winch position" ask; an order
# names the change ("hold position", "gain altitude"; "hole position" is a typo of one) or the
# value ("altitude 50", "orbit radius 30 m"), so the first word must be one of these
_QUANTITIES = frozenset(
    "position radius altitude height speed heading setting settings level bearing elevation"
    .split())
_QUANTITY_OWNERS = frozenset(
    """target current present actual commanded orbit orbiting winch hook tether gimbal camera
    cruise takeoff landing follow following mission""".split())
# How far or how long to somewhere, asked without a verb: "distance home", "eta to base",
# "time to home", "time left" (not "time to land": an order)
_ROUTE_LEFT = re.compile(
    r"^(?:distance|dist|eta|range)(?:\s+(?:to|from|back|home|left|remaining)\b|$)|"
    r"^time\s+(?:(?:to|till|until)\s+(?:home|base|launch|destination|the\s+next|next|arrival|"
    r"landing|touchdown)|left|remaining)\b")
# A getter verb of a console or an app before what it reads ("get rtl status", "read gimbal
# angle", "fetch on-ground flag", "check mode"): an order to show a value, which is a question
_GETTERS = frozenset(
    "get fetch query print read display show check poll pull grab retrieve dump echo".split())
_READINGS = frozenset("flag flags payout brightness volume value values info".split())
# a getter that moves instead ("get to the roof", "show up", "check in at the pad")
_GETTER_MOVES = frozenset("to into in on at up down back out over off away home".split())
# "y/n" after a state ("landed y/n", "RTH in progress y/n"): asked, never ordered
_YES_NO = re.compile(r"(?:^|\s|\()(?:y/n|y\s+or\s+n|yes/no|yes\s+or\s+no)\)?[\s?.!]*$")
# Flight modes by their autopilot names: "LAND or LOITER" asks which of the two
_MODES = (rf"(?:{MAPPED}|{UNMAPPED}|rth|althold|pos\s+hold|position|takeoff|circle|orbit|"
          r"follow(?:\s+me)?)")
_MODE_PAIR = re.compile(rf"^(?:in\s+)?{_MODES}(?:\s+mode)?\s+or\s+{_MODES}(?:\s+mode)?$")
# Irregular past participles: "has it gone home", "... and flown back" (an order never opens
# with one)
_IRREGULAR_PARTICIPLES = frozenset("gone flown taken done begun finished".split())
# A clause that states what was expected beside a question ("print the mode, expecting RTL")
_EXPECTED = re.compile(r"^(?:(?:i'm|im|i\s+am|we're|we\s+are)\s+)?(?:expecting|expected|"
                       r"should\s+(?:be|read|say|show)|supposed\s+to\s+be|hoping\s+for)\b")
# Words that say a question goes on into a state ("is it disarmed and safe to approach")
_STATE_OPENERS = frozenset("safe ready ok okay clear done finished able fine good still".split())
# A statement beside a question: "the red light is on, so is it filming?" (context, no order)
_STATEMENT = re.compile(
    r"^(?:(?:it\s+)?(?:looks|seems|appears|sounds)\s+(?:like|as\s+if|that)\b|"
    # "it looks slow", "it seems to just hover now", "they sound worried"
    r"(?:it|they|he|she)\s+(?:looks|seems|appears|sounds|feels|look|seem|appear|sound)\b|"
    r"(?:the|my|our|its|this|that)\s+(?:[\w-]+\s+){0,3}?(?:is|are|was|were|looks|seems)\b)")
# what may stand for the other state after "or": "on or not", "engaged or nah", "on or what"
_OR_ELSE = frozenset("not what nah no nope pending level in".split())
# A call sign's name and number ("eagle one", "drone 2"), not a step of a plan ("step 2")
_CALL_NAME = r"(?!(?:step|part|phase|item|stage|number)\b)"
_CALL_NUMBER = r"(?:one|two|three|four|five|six|seven|eight|nine|\d{1,3})"
# A call sign before the message ("eagle one, say altitude", "drone 2, ..."): what follows it
# opens the sentence
_CALL_SIGN = re.compile(
    rf"^{_CALL_NAME}(?:[a-z]+\s+)?{_CALL_NUMBER}$|"
    r"^[a-z]+\s+to\s+(?:drone|uav|aircraft|quad|copter)$|"
    # a station addressed: "tower, confirm bird is RTB?", "base, is it home?"
    r"^(?:tower|base|ground|control|command|ops|hq|dispatch)(?:\s+(?:control|ops|station))?$")
# A word of surprise or of waiting before a question ("wait, is it landing?!", "hold on, did it
# just RTL"): no order of its own ("wait" and "hold on" order a hover where no question follows)
_INTERJECTION = re.compile(
    r"^(?:wait(?:\s+wait)*|hold\s+on|hang\s+on|hold\s+up|one\s+sec(?:ond)?|wait\s+a\s+"
    r"(?:sec(?:ond)?|minute|moment)|whoa+|woah+|huh|hmm+|uh\s+oh|oh\s+no|what|really|seriously)$")
# A topic named before the question about it: "the orbit around the barn, did it complete?",
# "the gimbal, is it still tilted down?" (a determiner first: no order opens so)
_TOPIC = re.compile(r"^(?:the|my|our|your|its|that|this)\s+[\w'-]+(?:\s+[\w'-]+){0,4}$")
# Words that only place a question in time ("landing, already?")
_ONLY_TIME = frozenset("already yet still now again".split())
# A call sign opening a clause that goes on without a comma ("eagle one confirm you are down")
_CALL_SIGN_FIRST = re.compile(rf"^{_CALL_NAME}[a-z]+\s+{_CALL_NUMBER}\s+(?=[a-z])")
# "keep locked", "leave attached", "get armed": an order with a participle after its verb
_KEEPS_A_STATE = frozenset("keep leave get have make put set".split())
_PARTICLES = frozenset("in back away fully all the way".split())
# "-ed" words that are not a participle ("speed", "red")
_NOT_PARTICIPLES = frozenset(
    "speed need feed proceed exceed seed bleed red shed bed embed groundspeed airspeed "
    "windspeed".split())


# A state said without its verb ("we airborne", "it landed yet"): asked, never ordered
_BEING = _STATE_WORDS | frozenset(
    "airborne aloft flying hovering grounded landed home back".split())
_SUBJECT_WORDS = frozenset("we you u it they".split())
_PRONOUNS = _SUBJECT_WORDS | frozenset("i he she its our my".split())
# A reading named ("current groundspeed", "actual altitude"): asked
_READING = frozenset("current present actual".split())


def _terse_state(t: str) -> str:
    """Why the words of a clause that opens its sentence name a state to report ('' if not).

    "we airborne", "it landed yet" (a subject and a state, no verb); "drone armed", "motors
    disarmed", "armed" (a name and what was done to it, or the participle alone: the clause
    holds no order verb); "current groundspeed" (a reading named). At most four words.
    """
    words = [w for w in _WORD.findall(t) if w not in _ONLY_TIME]
    if not 1 <= len(words) <= 4 or words[0] in _ORDER_VERBS:
        return ''
    if words[0] in _SUBJECT_WORDS and len(words) >= 2 and words[1] in _BEING \
            and set(words[2:]) <= _STATE_WORDS | _PARTICLES:
        return f"a state without its verb ('{' '.join(words[:2])}')"
    if ("'" not in words[0] and words[0] not in _PRONOUNS
            and (_participle(words) or _participle(['x', *words]))):
        # (not "she's landed, safe the motors": a statement, and an order after it)
        return f"a state named ('{' '.join(words)}')"
    if words[0] in _READING and 2 <= len(words) <= 3 and not set(words) & _ORDER_VERBS:
        return f"a reading named ('{' '.join(words)}')"
    return ''


@dataclass(frozen=True)
class Mood:
    """How one clause is meant: a question about a state, an order, or neither."""

    kind: str  # QUESTION | ORDER | OTHER
    reason: str = ''
    howto: bool = False  # "how do I ...": advice, which no sensor answers


def _strip(text: str) -> str:
    text = normalise(text).lower().strip(' "\'()[]')
    return _FILLER.sub('', text).strip()


def _words(text: str) -> str:
    """The words of ``text``, lower case, one space apart."""
    return ' '.join(_WORD.findall(text.lower()))


def _participle(words: Sequence[str]) -> bool:
    """A name and what was done to it: "winch reeled in", "switch fired", "camera tilted down".

    Not "record filtered video" (a noun after the participle) nor "keep locked" (an order).
    """
    return len(words) >= 2 and words[0] not in _KEEPS_A_STATE and len(words[1]) > 3 \
        and words[1].endswith('ed') and words[1] not in _NOT_PARTICIPLES \
        and set(words[2:]) <= _STATE_WORDS | _PARTICLES


def clause_mood(text: str, asked: bool = False, initial: bool = True) -> Mood:
    """The mood of one clause, given its words as written and whether a "?" ends it.

    ``initial``: the clause opens its sentence. A later clause of a sentence ("could you circle
    the keep while filming?", "... and doesn't know help is coming") asks only with a question's
    own words and its "?" ("is the light on and is the winch up?").
    """
    t = _strip(text)
    if not t:
        return Mood(OTHER)
    if not initial and not asked:
        return Mood(OTHER)
    if _POLITE.match(t):
        return Mood(ORDER, 'a polite order')
    if _INDIRECT.match(t) or _CHECKING.match(_words(text)):
        return Mood(QUESTION, 'an indirect question')
    m = re.match(rf"^(?:please\s+)?{_MODAL}\s+(?:you|u|ya|ye)\s+(?:please\s+|kindly\s+|just\s+|"
                 rf"quickly\s+|maybe\s+|possibly\s+|now\s+)*(?P<verb>{_INFO})\b", t)
    if m:
        return Mood(QUESTION, f"a request for information ('{m.group('verb')}')")
    if re.match(rf"^(?:please\s+)?{_MODAL}\s+", t):
        if re.match(r"^(?:will|would|won't)\s+(?:it|the|this|that|we|our|my|there)\b", t) \
                and not re.match(r"^would\s+(?:it|the)\s+\w+\s+(?:please|kindly)\b", t):
            return Mood(QUESTION, 'a question about what will happen')
        return Mood(ORDER, 'a polite order phrased as a question')
    if _YES_NO.search(t):
        return Mood(QUESTION, "a yes/no question ('y/n')")
    if _SUBJECT_VERB.match(t) and (tag := _CLOSING_TAG.search(_words(t))):
        # "it's headed back to us isn't it", "it's on the ground now right"
        return Mood(QUESTION, f"a statement with a question tag ('{tag.group(0).strip()}')")
    if _MODE_PAIR.match(_words(t)):
        return Mood(QUESTION, 'a question which of two flight modes')
    if _HOWTO.match(t):
        return Mood(QUESTION, 'a how-to question (advice)', howto=True)
    # "at what time did it lift off", "from which side": a wh-word after its preposition
    m = re.match(rf"^(?P<wh>{_WH})\b", t) or re.match(
        r"^(?:at|in|on|from|to|by|for|since|until|till|with|after|before)\s+"
        r"(?P<wh>what|which|whose|how\s+(?:long|much|many|far|high|fast))\b", t)
    if m:
        return Mood(QUESTION, f"a wh-question ('{m.group('wh')}')")
    m = re.match(rf"^(?P<aux>{_AUX})\s+\S", t) or re.match(
        rf"^(?P<aux>{_AUX_DO})\s+{_SUBJECT}\b", t) or re.match(
        # "did arming work", "did people hear it": a positive "did" never orders
        r"^(?P<aux>did)\s+[a-z]", t) or re.match(
        rf"^(?P<aux>{_AUX_PERSON})\s+{_PERSON}\b", t) or re.match(
        # "have the motors been armed", not "have the quad follow me"
        r"^(?P<aux>have|haven't)\s+(?:the|it|its|our|my|all|both|they)\b(?:\s+[\w'-]+){0,3}?"
        r"\s+(?:been|got|gotten|gone|done|[a-z]+ed)\b", t)
    if m:
        if re.match(r"^is\s+it\s+(?:ok|okay|alright|fine|safe|ready)\s+to\b", t):
            return Mood(QUESTION, 'a question whether it is safe or ready')
        return Mood(QUESTION, f"a yes/no question ('{m.group('aux')}')")
    if initial and re.match(r"^(?:we|you|u|ya|it|they)\s+(?!\w+ing\s+(?:to|the|a|it|him|her)\b)"
                            r"(?:still\s+|all\s+)?[a-z]{2,}ing\b", t):
        # "we heading back to base yet", "you still recording": the auxiliary left out
        return Mood(QUESTION, "a question without its auxiliary ('we ...ing')")
    if initial and (terse := _terse_state(t)):
        return Mood(QUESTION, terse)
    if first_call := _CALL_SIGN_FIRST.match(t):
        # "eagle one confirm you are on the ground": the call sign, then the question
        rest = clause_mood(t[first_call.end():], asked, initial)
        if rest.kind == QUESTION:
            return rest
    if re.match(r"^(?:confirm|verify)\s+(?:that\s+)?(?:the\s+|our\s+|my\s+)?[\w-]+(?:\s+[\w-]+)?"
                r"\s+(?:is|are|was|has\s+been|isn't|aren't)\s+(?:not\s+|still\s+|fully\s+)?"
                r"[\w-]+$", t) \
            and (t.split()[-1] in _STATE_WORDS or _participle(['x', t.split()[-1]])):
        # "confirm kill switch is not engaged", "verify the hook is released"
        return Mood(QUESTION, f"a state to confirm ('... {t.split()[-1]}')")
    if asked and re.search(r"\b(?:on|off|up|down|in|out)\s+or\s+(?:on|off|up|down|in|out|not)\b",
                           t):
        return Mood(QUESTION, "a question whether it is on or off ('... or ...?')")
    words = _WORD.findall(t)
    first = words[0] if words else ''
    if asked and initial:
        if first and first not in _ORDER_VERBS and first not in ('please', 'pls', 'plz'):
            return Mood(QUESTION, "a question mark after no order verb")
        state = _WORD.findall(_TRAILING_TIME.sub('', t))
        if 2 <= len(state) <= 4 and state[-1] in _STATE_WORDS and first not in _SETS_A_STATE:
            return Mood(QUESTION, f"a state asked in a few words ('... {state[-1]}?')")
        if 2 <= len(state) <= 4 and state[-1] == 'mode' and first not in _SETS_A_STATE:
            # "RTL mode already??", "in loiter mode?": the flight mode asked
            return Mood(QUESTION, "a flight mode asked ('... mode?')")
    if initial and len(words) <= 5 and words[-1:] == ['yet'] and first not in _ORDER_VERBS \
            and not _NEGATION_FIRST.match(t):
        return Mood(QUESTION, "a state asked with 'yet' ('disarmed yet')")
    said = _WORD.findall(re.sub(r"\s+(?:please|pls|plz)$", '',
                                _TRAILING_TIME.sub('', t)).strip())
    if not said or _NEGATION_FIRST.match(t):
        return Mood(OTHER)
    if said[0] in _GETTERS and 2 <= len(said) <= 7 and said[-1] in _MEASURES | _READINGS \
            and not _GETTER_MOVES & set(said[1:-1]):
        # "get rtl status", "read gimbal angle", "check searchlight brightness level"
        return Mood(QUESTION, f"a reading asked for ('{said[0]} ... {said[-1]}')")
    if len(said) <= 6 and said[-2:-1] == ['still'] and first not in _SETS_A_STATE and (
            said[-1] in _STATE_WORDS or _participle(['x', said[-1]])):
        # "follow mode still on", "winch still lowered": a state that still holds, asked
        return Mood(QUESTION, f"a state asked with 'still' ('... still {said[-1]}')")
    if _REPORT.match(t) and len(said) <= 8 and (said[0] == 'report' or said[-1] in _MEASURES):
        return Mood(QUESTION, f"a request for a report ('{' '.join(said[:2])} ...')")
    if first in ('confirm', 'verify') and 2 <= len(said) <= 4 \
            and (said[-1] in _STATE_WORDS | {'away', 'gone', 'stowed'}
                 or _participle(['x', said[-1]])):
        # "confirm package away", "verify motors off": a state to be confirmed
        return Mood(QUESTION, f"a state to confirm ('... {said[-1]}')")
    if 2 <= len(said) <= 6 and first not in _SETS_A_STATE and (
            said[-1] in _STATUS_NOUNS
            or said[-1] in ('pct', 'percent', 'percentage') and said[-2] in _STATUS_NOUNS):
        # "winch status", "rth progress pct"
        return Mood(QUESTION, f"a status asked for ('... {said[-1]}')")
    if 2 <= len(said) <= 4 and said[-1] in _READ_ONLY and first not in _ORDER_VERBS:
        # "gimbal angle pls", "camera tilt": a name and a quantity of it, no verb
        return Mood(QUESTION, f"a quantity asked for ('... {said[-1]}')")
    if 2 <= len(said) <= 4 and said[-1] in _QUANTITIES and first in _QUANTITY_OWNERS \
            and not any(ch.isdigit() for w in said for ch in w):
        # "target altitude", "orbit radius", "winch position": a quantity of something, no verb
        return Mood(QUESTION, f"a quantity asked for ('... {said[-1]}')")
    if len(said) <= 6 and _ROUTE_LEFT.match(' '.join(said)):
        return Mood(QUESTION, f"how far or how long, asked ('{' '.join(said[:2])} ...')")
    if asked and 2 <= len(said) <= 4 and first in _ORDER_VERBS and _participle(said):
        # "winch reeled in?", "camera tilted down?": a name and what was done to it, asked
        # ("record filtered video?" orders: a noun follows the participle)
        return Mood(QUESTION, f"a state asked in a few words ('... {said[1]} ...?')")
    joined = ' '.join(said)
    pair = re.search(r"\b([a-z]+)\s+or\s+(?:still\s+)?([a-z]+)\b", joined)
    if pair and len(said) <= 6 and first not in _SETS_A_STATE and (
            pair.group(1) in _STATE_WORDS and pair.group(2) in _STATE_WORDS | _OR_ELSE
            or pair.group(0) == 'yes or no'):
        # "armed or disarmed right now", "rtl engaged or nah", "spotlight working yes or no"
        return Mood(QUESTION, f"a question which of two states ('{pair.group(0)}')")
    if pair and len(said) <= 6 and first not in _ORDER_VERBS and (
            pair.group(1).endswith('ing') and pair.group(2).endswith('ing')
            or re.search(r"\bor\s+not(?:\s+yet)?$|\bor\s+still\b", joined)):
        # "you holding or drifting", "touchdown or not yet", "homebound or still out there"
        return Mood(QUESTION, f"a question which of two states ('{pair.group(0)}')")
    return Mood(OTHER)


@dataclass(frozen=True)
class ClauseMood:
    """One clause of the request with its mood."""

    clause: Clause
    mood: Mood
    written: str  # the clause with the words the splitter stripped from its front


def _locate(lower: str, clauses: Sequence[Clause]) -> list[tuple[int, int]]:
    """Each clause's character range in ``lower`` (-1, -1 where it cannot be found in order)."""
    cursor = 0
    out: list[tuple[int, int]] = []
    for c in clauses:
        start = lower.find(c.text.lower(), cursor)
        if start < 0:
            out.append((-1, -1))
            continue
        end = start + len(c.text)
        out.append((start, end))
        cursor = end
    return out


def _last_action(moods: Sequence[ClauseMood]) -> int | None:
    """The index of the last action clause (not a condition) of ``moods``, None when none."""
    for k in range(len(moods) - 1, -1, -1):
        if moods[k].clause.role == 'action':
            return k
    return None


def clause_holding(moods: Sequence[ClauseMood], fragment: str) -> ClauseMood | None:
    """The first clause whose text holds ``fragment`` or is held by it (None when none)."""
    frag = fragment.lower().strip()
    for cm in moods:
        text = cm.clause.text.lower()
        if frag and (frag in text or text in frag):
            return cm
    return None


def clause_moods(text: str, clauses: Sequence[Clause] | None = None) -> list[ClauseMood]:
    """Every clause of ``text`` with its mood (see the module docstring)."""
    clauses = list(split_clauses(text) if clauses is None else clauses)
    full = normalise(text)
    lower = full.lower()
    spans = _locate(lower, clauses)
    out: list[ClauseMood] = []
    opens: list[bool] = []  # whether each clause opens its sentence
    prev_end = 0
    for c, (start, end) in zip(clauses, spans):
        if start < 0:
            out.append(ClauseMood(c, clause_mood(c.text), c.text))
            opens.append(True)
            continue
        between = lower[prev_end:start]
        initial = not out or bool(re.search(r"[.?!;:\n]|\s[-–—]+\s", between)) or (
            len(out) == 1 and bool(_CALL_SIGN.match(_words(out[0].written)))) or all(
            # "just checking, the motors are disarmed right?": an opener only ("whoa, why ...")
            not _strip(o.written) or _INTERJECTION.match(_words(o.written)) for o in out)
        # "the winch, is it wound in": after a topic only, the clause opens what is said of it
        # (asks without its "?"), but the topic stays in the sentence it names (`opens`)
        after_topic = not initial and len(out) == 1 and out[0].clause.role == 'action' \
            and bool(_TOPIC.match(_words(out[0].written)))
        # the words between the previous clause and this one, after its last sentence mark
        gap = re.split(r"[.?!;:\n]|,|\s[-–—]+\s", between)[-1]
        if c.role == 'condition' and c.marker:
            at = gap.rfind(c.marker.lower())
            gap = gap[at + len(c.marker):] if at >= 0 else ''
        gap = re.sub(r"^\s*(?:and\s+then|and|then|or|but|also|after\s+that)\b", '', gap)
        written = f'{gap.strip()} {c.text}'.strip()
        after = lower[end:]
        asked = bool(re.match(r"[\s\"')\]]*\?", after))
        if c.role == 'condition':
            mood = Mood(OTHER)
            head = _WORD.findall(c.text.lower())[:1]
            if out and out[-1].clause.role == 'action' \
                    and (_BARE_INFO.match(_strip(out[-1].written))
                         or _BARE_INFO.match(_words(out[-1].written))) \
                    and c.marker.lower() in ('if', 'whether', 'when', 'once'):
                # "check if the winch is up", "let me know whether we're recording": the
                # condition after a bare verb of information is what the question asks
                out[-1] = replace(out[-1], mood=Mood(QUESTION, 'an indirect question'))
                mood = Mood(QUESTION,
                            f"an indirect question ('{out[-1].clause.text} {c.marker}')")
            elif c.marker.lower() == 'when' and (asked or not out) and re.match(
                    rf"^(?:{_AUX}|{_AUX_PERSON}|{_AUX_DO}|did|will|would|can|should)\s",
                    c.text.lower()):
                # "when will we land?", and opening the request without its "?": "when did
                # we take off"
                mood = Mood(QUESTION, "a wh-question ('when')")
            elif out and out[-1].mood.kind == QUESTION and not initial and head \
                    and head[0] not in _ORDER_VERBS \
                    and c.marker.lower() in ('until', 'till', 'before', 'since', 'when',
                                             'while', 'after', 'as', 'once', 'whenever'):
                # "how long until it gets home", "why did follow mode drop out when the boat went
                # under the bridge": the time the question asks about
                mood = Mood(QUESTION, f"the question goes on ('{c.marker.lower()} ...')")
        else:
            mood = clause_mood(written, asked, initial or after_topic)
            words = _WORD.findall(_strip(written))
            if mood.kind == OTHER and asked and not initial and out \
                    and out[-1].mood.kind == QUESTION and words \
                    and words[0] not in _ORDER_VERBS:
                # "is the light on and the winch up?", "how far to the next waypoint?"
                mood = Mood(QUESTION, 'the question goes on')
            elif mood.kind == OTHER and not initial and out and out[-1].mood.kind == QUESTION \
                    and 2 <= len(words) <= 4 and (
                        words[0] not in _ORDER_VERBS
                        and (words[-1] in _STATE_WORDS or words[0] in _STATE_OPENERS)
                        or _participle(words)):
                # "is it safe, motors disarmed": a state named after the question, no order
                # verb; "can't tell if the kill | switch fired": a name and what it did
                mood = Mood(QUESTION, 'the question goes on')
            elif mood.kind == OTHER and not initial and out and out[-1].mood.kind == QUESTION \
                    and words and (_MODE_PAIR.match(' '.join(words)) or len(words) <= 6 and (
                        words[0] in _IRREGULAR_PARTICIPLES or _participle(['x', words[0]]))):
                # "check mode, LAND or LOITER"; "has it finished coming home and landed at
                # base": the question's auxiliary carries on, no order opens with a participle
                mood = Mood(QUESTION, 'the question goes on')
            elif mood.kind == OTHER and not initial and out and out[-1].mood.kind == QUESTION \
                    and c.marker.lower() in ('after', 'before', 'since', 'during', 'until',
                                             'while'):
                # "is it climbing out after takeoff": the time the question asks about
                mood = Mood(QUESTION, f"the question goes on ('{c.marker.lower()} ...')")
            elif mood.kind == OTHER and asked and not initial and words[:1] == ['or'] \
                    and (alt := _last_action(out)) is not None \
                    and (out[alt].mood.kind == QUESTION
                         or out[alt].mood.kind == OTHER
                         and (lead := _WORD.findall(_strip(out[alt].written))[:1]) != []
                         and lead[0] not in _ORDER_VERBS):
                # "will it set down once the mission ends, or just hover there?", "faster than
                # 10 m/s now, or still slower?": the other half of an alternative question
                said = "an alternative question ('..., or ...?')"
                if out[alt].mood.kind == OTHER:
                    out[alt] = replace(out[alt], mood=Mood(QUESTION, said))
                mood = Mood(QUESTION, said)
            elif mood.kind == OTHER and asked and not initial and words \
                    and set(words) <= _ONLY_TIME and out and out[-1].mood.kind == OTHER \
                    and out[-1].clause.role == 'action' \
                    and (head := _WORD.findall(_strip(out[-1].written))) \
                    and head[0] not in _ORDER_VERBS and not _NEGATION_FIRST.match(head[0]):
                # "landing, already?": a state placed in time and asked
                said = f"a state asked with '{words[-1]}'"
                out[-1] = replace(out[-1], mood=Mood(QUESTION, said))
                mood = Mood(QUESTION, said)
            elif out and out[-1].mood.kind == OTHER and out[-1].clause.role == 'action' \
                    and _TAG.match(tag := _words(written)) \
                    and (asked or bool(_NEGATIVE_TAG.match(tag))):  # "haven't you" asks unmarked
                prior = _strip(out[-1].written)
                head = _WORD.findall(prior)
                if head and head[0] not in _ORDER_VERBS and not _NEGATION_FIRST.match(prior) \
                        and not (head[0] in ('you', 'u') and head[1:2]
                                 and head[1] in _ORDER_VERBS):
                    # ("you bring the drone back home, yes?" orders: its subject and verb)
                    # "the motors are stopped, right?": a statement with a question tag
                    said = f"a statement with a question tag ('{tag}?')"
                    out[-1] = replace(out[-1], mood=Mood(QUESTION, said))
                    mood = Mood(QUESTION, said)
        out.append(ClauseMood(c, mood, written))
        opens.append(initial)
        prev_end = end
    # "tower to drone: touchdown or not yet": the call sign is part of the question after it
    if len(out) >= 2 and out[1].mood.kind == QUESTION and out[0].mood.kind == OTHER \
            and _CALL_SIGN.match(_words(out[0].written)):
        out[0] = replace(out[0], mood=Mood(QUESTION, 'the call sign of a question'))
    # "wait, is it landing?!": a word of surprise before a question; "the gimbal, is it still
    # tilted down?": the topic of the question after it (same sentence)
    for k in range(len(out) - 1):
        cm, nxt = out[k], out[k + 1]
        if cm.mood.kind == OTHER and cm.clause.role == 'action' and nxt.mood.kind == QUESTION:
            said = _words(cm.written)
            if _INTERJECTION.match(said):
                out[k] = replace(cm, mood=Mood(QUESTION, 'a word of surprise before a question'))
            elif _TOPIC.match(said) and not opens[k + 1]:
                out[k] = replace(cm, mood=Mood(QUESTION, 'the topic of the question after it'))
    # "the red light is on, so is it filming?": a statement beside a question is its context
    if any(cm.mood.kind == QUESTION for cm in out):
        for k, cm in enumerate(out):
            if cm.mood.kind == OTHER and cm.clause.role == 'action' \
                    and (_STATEMENT.match(_strip(cm.written))
                         or _EXPECTED.match(_strip(cm.written))):
                out[k] = replace(cm, mood=Mood(QUESTION, 'a statement beside a question'))
    return out


def state_sensor(actuator: str, clause_text: str, catalog: Catalog) -> list[str]:
    """The sensors that answer a question about ``actuator``'s state asked in ``clause_text``."""
    lower = clause_text.lower()
    own = set(actuator.split('_'))  # "are we holding position?": its own name is no cue
    cued = [] if actuator in NO_CUES else [
        s for rx, s in CUES for m in rx.finditer(lower)
        if s in catalog and set(_WORD.findall(m.group(0))) - own]
    if cued:
        return list(dict.fromkeys(cued))
    default = STATE_SENSORS.get(actuator, 'vehicle_state')
    return [default] if default in catalog else []


def _overlap(a: str, b: str) -> float:
    wa, wb = content_words(a), content_words(b)
    return len(wa & wb) / max(1, len(wa | wb))


def clause_of(tool: str, decision: Decision, moods: Sequence[ClauseMood],
              catalog: Catalog) -> int | None:
    """The position in ``moods`` of the clause that chose ``tool`` (None: it cannot be told)."""
    texts = [cm.clause.text.lower() for cm in moods]
    best: dict[int, float] = {}
    for e in decision.evidence.get(tool, []):
        if not e.fragment or e.source not in ('retrieval', 'model'):
            continue
        frag = e.fragment.lower()
        if frag in texts:
            k = texts.index(frag)
            best[k] = max(best.get(k, 0.0), 2.0 + e.value)
            continue
        for k, t in enumerate(texts):  # a respelt clause ("retrun home" read as "return home")
            o = _overlap(frag, t)
            if o >= 0.5:
                best[k] = max(best.get(k, 0.0), o)
    if not best:
        spec = catalog.by_name.get(tool)
        if spec is None:
            return None
        own = content_words(' '.join([spec.name.replace('_', ' '), spec.summary, *spec.keywords]))
        stems = {w.rstrip('s') for w in own}
        for k, cm in enumerate(moods):
            n = len({w for w in content_words(cm.written) if w in own or w.rstrip('s') in stems})
            if n:
                best[k] = float(n)
    if not best:
        return None
    top = max(best.values())
    found = [k for k, v in best.items() if v == top]
    return found[0] if len(found) == 1 else None


def _named_by_an_order(tool: str, moods: Sequence[ClauseMood], catalog: Catalog,
                       asked_at: int = -1) -> bool:
    """An order clause of the request names the tool too, or points back at it.

    "Compass heading? Correct heading to 090.": the set_heading the question's words retrieved
    is what the order asks for. "Is the light on? If not, turn it on.": a short order after the
    question (clause ``asked_at``) whose object is a pronoun acts on what the question asked
    about.
    """
    spec = catalog.by_name[tool]
    generic = {'control', 'motors', 'point', 'target', 'position', 'area', 'home', 'mission'}
    own = {w for w in tool.split('_') if len(w) > 3 and w not in generic} | {
        k.lower() for k in spec.keywords}
    for k, cm in enumerate(moods):
        said = _words(cm.written)
        # "if not play the alarm": the splitter cuts "if not" before the verbs of ACTION_VERBS only
        # ("if not start the video"); after another verb the condition is "not play the alarm",
        # and what follows "not" / "so" is the order
        unsaid = re.match(r"(?:not|so)\s+(\w+)\b", said)
        if cm.clause.role == 'condition' and cm.clause.marker.lower() == 'if' and unsaid \
                and unsaid.group(1) in _ORDER_VERBS:
            said = said[unsaid.start(1):]
        elif cm.mood.kind == QUESTION or cm.clause.role != 'action' or cm.clause.negated \
                or cm.clause.steering:
            continue
        if any(re.search(rf"\b{re.escape(w)}\b", said) for w in own):
            return True
        words = said.split()
        if 0 <= asked_at < k and 2 <= len(words) <= 5 and words[0] in _ORDER_VERBS \
                and words[1] in ('it', 'them', 'that', 'this'):
            return True
    return False


@dataclass
class Answered:
    """The decision with its question clauses answered by sensors, and what was dropped."""

    decision: Decision
    drops: list[QuestionDrop] = field(default_factory=list)


def answer_questions(decision: Decision, text: str, catalog: Catalog,
                     probe: Callable[[], float] | None = None,
                     probe_threshold: float = 1.0) -> Answered:
    """Drop actuators chosen from question clauses; the sensor that reads the state answers.

    ``probe`` (the question probe, :mod:`tool_router.routing.question_probe`) gives the
    probability that the whole request asks about a state; it is called only when the rules
    read no clause as a question and none as a polite order, and at ``probe_threshold`` or
    above every clause is read as a question.
    """
    actuators = [t for t in decision.tools
                 if t in catalog and catalog.by_name[t].kind is Kind.ACTUATOR]
    if not actuators:
        return Answered(decision)
    moods = clause_moods(text)
    # a negated clause counts when it asks ("not sure whether people heard the speaker")
    counting = [cm for cm in moods if not cm.clause.steering
                and (not cm.clause.negated or cm.mood.kind == QUESTION)]
    if not any(cm.mood.kind == QUESTION for cm in counting):
        if probe is None or any(cm.mood.kind == ORDER for cm in moods):
            return Answered(decision)
        p = probe()
        if p < probe_threshold:
            return Answered(decision)
        said = (f'the request reads as a question about a state (question probe '
                f'{p:.3f} >= {probe_threshold:.3f})')
        moods = [cm if cm.clause.steering or cm.clause.negated
                 else replace(cm, mood=Mood(QUESTION, said)) for cm in moods]
        counting = [cm for cm in moods if not cm.clause.steering and not cm.clause.negated]
        # an emergency stop is never dropped on the probe's word alone
        actuators = [t for t in actuators if t not in PROBE_KEEPS]
        if not counting or not actuators:
            return Answered(decision)
    # no clause orders anything: every actuator was chosen from a question
    only_questions = not any(cm.clause.role == 'action' and cm.mood.kind != QUESTION
                             for cm in counting)
    tools, scores = list(decision.tools), list(decision.scores)
    if len(scores) != len(tools):
        scores = [0.0] * len(tools)
    clause_index = dict(decision.clause_index)
    conditions = dict(decision.conditions)
    evidence = dict(decision.evidence)
    drops: list[QuestionDrop] = []
    placed: dict[str, int] = {}  # tool -> position in moods
    for t in tools:
        k = clause_of(t, decision, moods, catalog) if t in catalog else None
        if k is not None:
            placed[t] = k
    for tool in actuators:
        k = placed.get(tool)
        if k is None:
            if not only_questions:
                continue  # its clause cannot be told and some clause orders: it stays
            k = next(i for i, cm in enumerate(moods) if cm.mood.kind == QUESTION)
        cm = moods[k]
        if cm.mood.kind != QUESTION or _named_by_an_order(tool, moods, catalog, k):
            continue
        at = tools.index(tool)
        score = scores[at]
        del tools[at], scores[at]
        clause_index.pop(tool, None)
        conditions.pop(tool, None)
        evidence.pop(tool, None)
        answered = ''
        if not cm.mood.howto:
            same = [t for t in tools if t in catalog and catalog.by_name[t].kind is Kind.SENSOR
                    and placed.get(t, k if only_questions else -1) == k]
            if not same:
                for sensor in state_sensor(tool, cm.written, catalog):
                    if sensor not in tools:
                        tools.insert(at, sensor)
                        scores.insert(at, score)
                        placed[sensor] = k
                        clause_index[sensor] = cm.clause.index
                        evidence[sensor] = [Evidence(
                            'rule', cm.clause.text,
                            f'state question: reads the state of {tool}', round(score, 4))]
                        at += 1
                    answered = answered or sensor
            else:
                answered = same[0]
        drops.append(QuestionDrop(tool=tool, clause=cm.clause.text, reason=cm.mood.reason,
                                  answered_by=answered))
    if not drops:
        return Answered(decision)
    kept = set(tools)
    note = decision.note if tools else 'a question no sensor answers (advice): nothing acts'
    return Answered(
        replace(decision, tools=tools, scores=scores, clause_index=clause_index,
                conditions={t: c for t, c in conditions.items() if t in kept},
                evidence=evidence, abstained=not tools, note=note),
        drops,
    )

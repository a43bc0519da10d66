"""Questions never act (routing/questions.py): the mood of each clause, and the router's answer.

A clause that asks about a state is answered by the sensor that reads it, never the actuator
that changes it; a polite order phrased as a question still acts; per clause ("what's the
battery and then land" lands). The fast tests take hand-made decisions or a policy that always
answers the same actuator (the fake encoder's router: no MiniLM); the slow one routes the dev
question file with the shipped router.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tool_router.common.catalog import Kind
from tool_router.routing.config import config_model
from tool_router.routing.policies.base import Decision, Evidence
from tool_router.routing.policies.registry import REGISTRY, PolicySpec
from tool_router.routing.questions import (
    ORDER, OTHER, QUESTION, STATE_SENSORS, answer_questions, clause_mood, clause_moods,
    state_sensor,
)
from tool_router.routing.router import Router

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize('text', [
    'is the spotlight on', 'are we recording right now', 'has it touched down',
    'did the package drop',
    "what's the altitude", 'how far are we from home', 'how much battery is left', 'where are we',
    'which waypoint are we on', 'have the motors been armed yet', 'do we have gps lock',
    'tell me whether the winch is up', 'can you tell me how high we are',
    'could you check whether we are still recording', 'r we armed', 'i wonder if it landed',
    'will the battery last until the end of the survey',
])
def test_questions_about_a_state(text):
    assert clause_mood(text).kind == QUESTION


@pytest.mark.parametrize('text, asked', [('recording', True), ('still orbiting', True)])
def test_a_question_mark_after_no_order_verb_asks(text, asked):
    assert clause_mood(text, asked).kind == QUESTION
    assert clause_mood(text, False).kind == OTHER  # no "?", no question
    # ("payload released" asks without its mark: a name and what was done to it, below)


@pytest.mark.parametrize('text', [
    'can you land now', 'could you take a photo', 'would you return home please',
    'will you take off', 'can the drone circle the tower', 'could it build a map of the yard',
    'would you mind starting a recording', 'is it possible to drop the package here',
    'are you able to lower the winch', 'how about landing over there',
    "why don't you head back home", 'can we record the horses', 'any chance you could land',
    'can you tell the walkers to move back', 'please could you lift off',
])
def test_polite_orders_phrased_as_questions(text):
    assert clause_mood(text, asked=True).kind == ORDER


@pytest.mark.parametrize('text', ['land', 'return home', 'have the quad follow me',
                                  'do a figure eight', 'take off and hover', 'record the gate'])
def test_plain_orders_are_no_questions(text):
    assert clause_mood(text, asked=True).kind == OTHER


@pytest.mark.parametrize('text', ['e-stop active?', 'rtl engaged?', 'lights on right now?',
                                  'winch up yet?', 'disarmed yet', 'did arming work',
                                  'did people hear the announcement'])
def test_a_state_in_a_few_words_asks(text):
    """A name and its state, asked: the name may be an order verb's ("rtl", "lights")."""
    assert [m.mood.kind for m in clause_moods(text)] == [QUESTION]


@pytest.mark.parametrize('text', ['turn the lights on?', 'switch the spotlight off?', 'rtl now?',
                                  'lights on', "don't land yet", 'arm yet'])
def test_an_order_of_a_state_stays_an_order(text):
    assert QUESTION not in [m.mood.kind for m in clause_moods(text)]


def test_a_statement_with_a_question_tag_asks_and_an_order_with_one_orders():
    assert [m.mood.kind for m in clause_moods('the motors are stopped, right?')] == \
        [QUESTION, QUESTION]
    assert [m.mood.kind for m in clause_moods("it's landed, yes?")][0] == QUESTION
    assert QUESTION not in [m.mood.kind for m in clause_moods('land, right?')]
    assert QUESTION not in [m.mood.kind for m in clause_moods('hold position, ok?')]


@pytest.mark.parametrize('text', ["the winch is down isn't it", "you've disarmed haven't you",
                                  "it's back at the pad right", 'the light is still on correct',
                                  "we're recording, aren't we?", "it's hovering, didn't you say?"])
def test_a_tag_closing_its_statement_asks(text):
    assert QUESTION in [m.mood.kind for m in clause_moods(text)]


@pytest.mark.parametrize('text', ["it's time to come home right", 'turn right', 'yaw right',
                                  "land it, won't you", 'move it right', 'go home right now'])
def test_orders_near_a_closing_tag_stay_orders(text):
    assert QUESTION not in [m.mood.kind for m in clause_moods(text)]


def test_checking_if_and_a_remark_beside_a_question_ask():
    """ "checking if ..." is an indirect question; "it looks slow" beside one is its context."""
    assert [m.mood.kind for m in clause_moods('checking if the light went off, it looks dark')] \
        == [QUESTION, QUESTION, QUESTION]
    assert {m.mood.kind for m in clause_moods('just checking whether the mapping stopped')} \
        == {QUESTION}
    assert [m.mood.kind for m in clause_moods('did it climb? it seems low')] == \
        [QUESTION, QUESTION]
    # without a question the remark stays what it was; "checking the X" is an order
    assert [m.mood.kind for m in clause_moods('it looks dark, turn on the light')] == \
        [OTHER, OTHER]
    assert QUESTION not in [m.mood.kind for m in clause_moods('checking the battery then land')]


@pytest.mark.parametrize('text, kinds', [('base, is it home yet?', [QUESTION, QUESTION]),
                                         ('tower, confirm the quad is down', [QUESTION, QUESTION]),
                                         ('base, land now', [OTHER, OTHER])])
def test_a_station_addressed_before_a_question_is_part_of_it(text, kinds):
    assert [m.mood.kind for m in clause_moods(text)] == kinds


@pytest.mark.parametrize('text, kinds', [
    ('wait, is the winch still down?', [QUESTION, QUESTION]),
    ('hold on, did it just start recording??', [QUESTION, QUESTION]),
    ('whoa, why is it climbing', [QUESTION, QUESTION]),
    ('wait, land now', [OTHER, OTHER]),  # no question follows: "wait" may order a hover
    ('hold on and take a photo', [OTHER, OTHER]),
])
def test_a_word_of_surprise_before_a_question_is_part_of_it(text, kinds):
    assert [m.mood.kind for m in clause_moods(text)] == kinds


@pytest.mark.parametrize('text, kinds', [
    ('the survey of the field, is it done?', [QUESTION, QUESTION]),
    ('the light, still on?', [QUESTION, QUESTION]),
    ('the red car, follow it', [OTHER, OTHER]),
    ('the battery is low. is the light on?', [QUESTION, QUESTION]),  # a statement beside
    # without its mark: the clause after a topic opens what is said of it
    ('the winch, is it wound in', [QUESTION, QUESTION]),
    ('my drone, where is it', [QUESTION, QUESTION]),
    ('the payload, drop it', [OTHER, OTHER]),
    ('the winch. is it wound in', [OTHER, QUESTION]),  # a sentence of its own: no topic
])
def test_a_topic_before_its_question_is_part_of_it(text, kinds):
    assert [m.mood.kind for m in clause_moods(text)] == kinds


@pytest.mark.parametrize('text, kind', [
    ('we airborne', QUESTION),  # a subject and a state, no verb
    ('it landed yet', QUESTION),
    ('drone armed', QUESTION),  # a name and what was done to it ("drone" is an address)
    ('motors disarmed', QUESTION),
    ('payload released', QUESTION),
    ('current groundspeed', QUESTION),  # a reading named ("groundspeed" is no participle)
    ('keep locked', OTHER),  # an order with a participle
    ("she's landed", OTHER),  # a statement ("ok she's landed, safe the motors" orders)
    ('we land now', OTHER),
    ('record filtered video', OTHER),
    ('arm', OTHER),
])
def test_a_terse_state_without_its_verb_asks(text, kind):
    assert clause_moods(text)[0].mood.kind == kind


@pytest.mark.parametrize('text, kinds', [
    ('is it mapping, or just hovering there?', [QUESTION, QUESTION]),
    ('above 50 m now, or still climbing?', [QUESTION, QUESTION]),
    ('recording, already?', [QUESTION, QUESTION]),
    ('land now, or wait?', [OTHER, OTHER]),  # an order first: the operator's choice, not asked
    ('follow the red car, or the blue one?', [OTHER, OTHER]),
    ('land, already?', [OTHER, OTHER]),
])
def test_alternatives_and_a_time_after_a_state_ask(text, kinds):
    assert [m.mood.kind for m in clause_moods(text)] == kinds


def test_a_time_after_a_why_question_is_part_of_it():
    """ "why did follow mode drop out when the boat went under the bridge": no boat to follow."""
    assert [m.mood.kind for m in clause_moods(
        'why did the recording stop when it flew under the bridge')] == [QUESTION, QUESTION]
    assert [m.mood.kind for m in clause_moods('start recording when it flies under the bridge')] \
        == [OTHER, OTHER]


@pytest.mark.parametrize('text, kind', [('RTL mode already??', QUESTION),
                                        ('in loiter mode?', QUESTION),
                                        ('switch to rtl mode?', OTHER), ('rtl mode', OTHER),
                                        ('you mind bringing it back to launch?', ORDER)])
def test_a_mode_asked_and_you_mind(text, kind):
    assert clause_moods(text)[0].mood.kind == kind


@pytest.mark.parametrize('text, kind', [
    ('we heading back to base yet', QUESTION), ('you still recording', QUESTION),
    ('eagle one confirm you are on the ground', QUESTION),
    ('confirm kill switch is not engaged', QUESTION), ('verify the hook is released', QUESTION),
    ('eagle one land now', OTHER), ('you bring it home', OTHER), ('confirm landing', OTHER),
    ('we flying to the barn then land', OTHER),  # a plan, said without its "?"
])
def test_a_question_without_its_auxiliary_a_call_sign_and_a_state_to_confirm(text, kind):
    assert clause_moods(text)[0].mood.kind == kind


def test_you_and_an_order_verb_with_a_tag_orders():
    assert QUESTION not in [m.mood.kind for m in clause_moods('you bring it back home, yes?')]


def test_a_time_the_question_asks_about_is_part_of_it():
    """ "is it climbing out after takeoff" asks; "take a photo after takeoff" orders both. """
    assert [m.mood.kind for m in clause_moods('is it climbing out after takeoff')] == \
        [QUESTION, QUESTION]
    assert [m.mood.kind for m in clause_moods('take a photo after takeoff')] == [OTHER, OTHER]


@pytest.mark.parametrize('text', ['winch status', 'rth status please', 'mapping progress',
                                  'report gimbal angle', 'give me the landing state',
                                  'tell me the winch position', 'winch reeled in?',
                                  'camera tilted all the way down?', 'armed or disarmed right now',
                                  'lamp on or off', 'rtl engaged or nah',
                                  'spotlight working yes or no', 'gimbal down or still level'])
def test_a_status_asked_for_without_a_question_word_asks(text):
    """A status as a noun phrase, an order to report, a participle, two states to choose from."""
    assert [m.mood.kind for m in clause_moods(text)] == [QUESTION]


@pytest.mark.parametrize('text', ['hold position', 'set the gimbal angle to 30 degrees',
                                  'give me a photo', 'report to the gate', "don't report status",
                                  'turn the light on or off', 'record filtered video?',
                                  'winch up or down by 2 m', 'land at the red marker?',
                                  'land or hover', 'turn it on or not'])
def test_orders_near_those_shapes_stay_orders(text):
    assert QUESTION not in [m.mood.kind for m in clause_moods(text)]


@pytest.mark.parametrize('text', ['not sure if we took off', "can't tell whether it's airborne",
                                  'no idea if the landing finished', 'any update on the landing',
                                  'status of the winch please', 'gimbal angle pls',
                                  'i need the winch line length'])
def test_what_the_operator_cannot_tell_asks(text):
    """Uncertainty, an update asked for, a status or a quantity named: each a question."""
    assert QUESTION in [m.mood.kind for m in clause_moods(text)]
    assert OTHER not in [m.mood.kind for m in clause_moods(text) if m.clause.role == 'action']


@pytest.mark.parametrize('text', ["not sure, land anyway", 'no, land now', 'gimbal down 30',
                                  'set gimbal angle', 'i need the drone to land'])
def test_orders_near_the_unsure_shapes_stay_orders(text):
    assert QUESTION not in [m.mood.kind for m in clause_moods(text)]


@pytest.mark.parametrize('text', ['at what time did the drone lift off', 'from which side is it',
                                  'for how long has it hovered'])
def test_a_wh_word_after_its_preposition_asks(text):
    assert [m.mood.kind for m in clause_moods(text)] == [QUESTION]


def test_when_with_an_auxiliary_opening_the_request_asks_without_its_question_mark():
    assert [m.mood.kind for m in clause_moods('when did we take off')] == [QUESTION]
    assert [m.mood.kind for m in clause_moods('when the battery is low, land')] == [OTHER, OTHER]


@pytest.mark.parametrize('text', ['whether rtl engaged', 'any indication it returned home',
                                  'the boss wants to know whether it took off',
                                  'the pilot asks if the gimbal got pointed down'])
def test_whether_a_sign_or_someone_elses_question_asks(text):
    assert [m.mood.kind for m in clause_moods(text)][0] == QUESTION


@pytest.mark.parametrize('text', ['we good on the winch', 'confirm you are airborne',
                                  'confirm holding position', 'confirm package away',
                                  'say gimbal position', 'eagle one, say your landing status',
                                  'you holding or drifting', 'cable out or in',
                                  'touchdown or not yet'])
def test_radio_style_checks_ask(text):
    assert QUESTION in [m.mood.kind for m in clause_moods(text)]


@pytest.mark.parametrize('text', ['eagle one, land now', 'confirm and take off', 'confirm landing',
                                  'say hello on the speaker', 'say again and then land',
                                  'drone two, follow the red car'])
def test_radio_style_orders_order(text):
    assert QUESTION not in [m.mood.kind for m in clause_moods(text)]


def test_someone_elses_order_stays_an_order():
    assert QUESTION not in [m.mood.kind for m in clause_moods('the client wants you to land')]


def test_a_preposition_before_an_order_is_no_question():
    assert QUESTION not in [m.mood.kind for m in clause_moods('at the gate, land')]


def test_a_statement_beside_a_question_is_its_context(catalog):
    """ "the red light is on, so is it filming?": the light is no order."""
    moods = clause_moods('the red light is on, so is it filming?')
    assert [m.mood.kind for m in moods] == [QUESTION, QUESTION]
    d = _decision(['vehicle_state', 'spotlight'], {'spotlight': 'the red light is on'})
    assert 'spotlight' not in answer_questions(
        d, 'the red light is on, so is it filming?', catalog).decision.tools
    # without a question a statement stays what it was; an order beside it orders
    assert [m.mood.kind for m in clause_moods('the battery is low, land')] == [OTHER, OTHER]


def test_a_negated_question_still_counts(catalog):
    """ "not sure whether people heard the speaker": the splitter marks it negated."""
    out = answer_questions(_decision(['speaker_broadcast']),
                           'not sure whether people heard the speaker', catalog)
    assert out.decision.tools == ['vehicle_state']
    assert answer_questions(_decision(['land']), "don't land yet", catalog).decision.tools == \
        ['land']


def test_a_question_goes_on_into_a_time_or_a_named_state():
    """ "how long until it gets home": the condition is what the question asks about."""
    assert [m.mood.kind for m in clause_moods('how long until it gets home')] == \
        [QUESTION, QUESTION]
    assert [m.mood.kind for m in clause_moods('is it safe, motors disarmed')] == \
        [QUESTION, QUESTION]
    assert [m.mood.kind for m in clause_moods('is the battery ok, land')][1] == OTHER
    assert [m.mood.kind for m in clause_moods('fly north until you see a car')] == [OTHER, OTHER]
    # the splitter reads "switch" as a verb; "switch fired" still goes on with the question
    assert [m.mood.kind for m in clause_moods("can't tell if the kill switch fired")] == \
        [QUESTION] * 3


def test_an_order_after_if_not_without_its_comma_acts(catalog):
    """ "are we recording? if not start the video": the splitter reads a condition "not start
    the video"; the order in it still names the recorder."""
    d = _decision(['vehicle_state', 'video_recorder'], {'video_recorder': 'are we recording'})
    text = 'are we recording? if not start the video'
    assert 'video_recorder' in answer_questions(d, text, catalog).decision.tools
    assert 'video_recorder' not in answer_questions(
        d, 'are we recording? if it is low', catalog).decision.tools


def test_how_to_questions_are_advice():
    mood = clause_mood('how do I land the drone')
    assert mood.kind == QUESTION and mood.howto


def test_moods_are_per_clause_with_the_stripped_words_put_back():
    moods = clause_moods("what's the battery and then land")
    assert [m.mood.kind for m in moods] == [QUESTION, OTHER]
    moods = clause_moods('how high are we, and could you climb to 80 m?')
    assert [m.mood.kind for m in moods] == [QUESTION, ORDER]
    assert moods[1].written == 'could you climb to 80 m'  # the splitter strips "could you"
    # an indirect question split at its "if": the condition is what it asks
    moods = clause_moods('check if the winch is up and then fly home')
    assert [m.mood.kind for m in moods] == [QUESTION, QUESTION, OTHER]
    assert [m.mood.kind for m in clause_moods('when will we land?')] == [QUESTION]
    assert [m.mood.kind for m in clause_moods('when the battery is low, land')] == [OTHER, OTHER]


def test_every_actuator_has_a_sensor_that_reads_its_state(catalog):
    actuators = {t.name for t in catalog if t.kind is Kind.ACTUATOR}
    assert set(STATE_SENSORS) == actuators
    for sensor in STATE_SENSORS.values():
        assert catalog.by_name[sensor].kind is Kind.SENSOR


def test_the_quantity_asked_picks_the_sensor(catalog):
    assert state_sensor('return_to_home', 'how far are we from home', catalog) == ['gps_position']
    assert state_sensor('return_to_home', 'are we heading home', catalog) == ['vehicle_state']
    assert state_sensor('takeoff', 'how high did it take off to', catalog) == ['altitude_sensor']
    # its own name is no cue; a payload's state is vehicle_state's whatever the words
    assert state_sensor('hold_position', 'are we holding position', catalog) == ['vehicle_state']
    assert state_sensor('winch_control', 'how far down is the hook', catalog) == ['vehicle_state']
    assert state_sensor('execute_mission', 'how far through the survey are we',
                        catalog) == ['vehicle_state']


def _decision(tools, fragments=None):
    evidence = {t: [Evidence('retrieval', f, 'clause similarity', 0.7)]
                for t, f in (fragments or {}).items()}
    return Decision('test', list(tools), [0.9] * len(tools), evidence=evidence)


def test_an_order_that_points_back_at_the_question_acts(catalog):
    """ "is the light on? if not, turn it on": the order's "it" is the light the question named."""
    d = _decision(['vehicle_state', 'spotlight'], {'spotlight': 'is the light on'})
    text = 'is the light on? if not, turn it on'
    assert 'spotlight' in answer_questions(d, text, catalog).decision.tools
    # the question alone does not switch the light
    assert 'spotlight' not in answer_questions(d, 'is the light on?', catalog).decision.tools


def test_a_state_question_drops_the_actuator_and_says_why(catalog):
    out = answer_questions(_decision(['spotlight']), 'is the spotlight on?', catalog)
    assert out.decision.tools == ['vehicle_state']
    [drop] = out.drops
    assert (drop.tool, drop.answered_by, drop.clause) == ('spotlight', 'vehicle_state',
                                                          'is the spotlight on')
    assert 'yes/no question' in drop.reason
    out = answer_questions(_decision(['return_to_home']), 'how far are we from home?', catalog)
    assert out.decision.tools == ['gps_position']
    # a sensor of the clause already answers: nothing is added
    out = answer_questions(_decision(['payload_release', 'vehicle_state']),
                           'did the payload drop?', catalog)
    assert out.decision.tools == ['vehicle_state'] and out.drops[0].answered_by == 'vehicle_state'


@pytest.mark.parametrize('text, tool', [
    ('can you land now?', 'land'), ('could you take a photo?', 'rgb_camera'),
    ('would you return home please', 'return_to_home'), ('start recording', 'video_recorder'),
])
def test_polite_orders_still_act(catalog, text, tool):
    out = answer_questions(_decision([tool]), text, catalog)
    assert out.decision.tools == [tool] and not out.drops


def test_a_question_clause_beside_an_order_clause(catalog):
    text = "what's the battery and then land"
    out = answer_questions(_decision(['battery_status', 'land'],
                                     {'battery_status': "what's the battery", 'land': 'land'}),
                           text, catalog)
    assert out.decision.tools == ['battery_status', 'land'] and not out.drops
    text = 'is the light on? and hover here'
    out = answer_questions(_decision(['hold_position', 'spotlight'],
                                     {'hold_position': 'hover here',
                                      'spotlight': 'is the light on'}), text, catalog)
    assert out.decision.tools == ['hold_position', 'vehicle_state']
    assert out.decision.clause_index['vehicle_state'] == 0
    assert [d.tool for d in out.drops] == ['spotlight']
    # no evidence: the words the clause shares with the tool's name and keywords place it
    out = answer_questions(_decision(['hold_position', 'spotlight']), text, catalog)
    assert out.decision.tools == ['hold_position', 'vehicle_state']


def test_how_to_drops_and_adds_nothing(catalog):
    out = answer_questions(_decision(['land']), 'how do I land the drone?', catalog)
    assert out.decision.tools == [] and out.drops[0].answered_by == ''


class _Always:
    """A policy that answers one actuator whatever it is asked (as an embedding policy may)."""

    def __init__(self, tool: str) -> None:
        self.name = f'always_{tool}'
        self.tool = tool

    def route(self, text: str, max_tools: int) -> Decision:
        return Decision(self.name, [self.tool], [0.95])


def _router(fake_router, **settings):
    registry = REGISTRY.with_policies(
        PolicySpec('always_payload', lambda ctx: _Always('payload_release')),
        PolicySpec('always_land', lambda ctx: _Always('land')))
    config = config_model(registry)(chroma_ephemeral=True, **settings)
    return Router(config, index=fake_router.index)


def test_the_router_applies_it_to_every_policy_and_explains(fake_router):
    with _router(fake_router) as router:
        result = router.route('did the payload drop?', 'always_payload')
        assert result.tools == ['vehicle_state']
        [drop] = result.explanation().questions
        assert drop.tool == 'payload_release' and drop.answered_by == 'vehicle_state'
        assert 'did the payload drop' in drop.clause
        assert router.route('could you drop the payload?', 'always_payload').tools == [
            'payload_release']
        # per clause: the question does not stop the order after it
        result = router.route("what's the battery and then land", 'always_land')
        assert result.tools == ['land'] and not result.questions
        # the shipped policies pass through the same step
        for policy in ('lcr', 'cdbv3'):
            result = router.route('is the spotlight on?', policy)
            assert not {t for t in result.tools
                        if router.catalog.by_name[t].kind is Kind.ACTUATOR}
    with _router(fake_router, state_questions=False) as router:  # measuring "before"
        assert router.route('did the payload drop?', 'always_payload').tools == [
            'payload_release']


def test_the_explanation_round_trips_the_drops(fake_router):
    from tool_router.common.explanation import Explanation

    with _router(fake_router) as router:
        text = router.route('is the winch up?', 'always_payload').explanation().to_json()
    assert Explanation.from_json(text).questions[0].tool == 'payload_release'


@pytest.mark.parametrize('name, every', [('dev_questions.jsonl', 2),
                                         ('dev_terse_questions.jsonl', 1),
                                         ('dev_app_questions.jsonl', 2),
                                         ('dev_spoken_questions.jsonl', 1),
                                         ('dev_register_questions.jsonl', 1)])
def test_the_shipped_router_on_the_dev_question_file(router, name, every):
    """MiniLM and lcr: no dev state question selects an actuator; every polite order acts.

    ``dev_terse_questions.jsonl``: the terse shapes of REAL_WORDING.md ("distance home",
    "target altitude", "how far to the next waypoint"), written for the rules of 2026-12-06;
    kept apart from ``dev_questions.jsonl`` so that the question probe's fit
    (scripts/fit_model.sh) still reproduces the shipped probe. ``dev_app_questions.jsonl``: two
    more writers (2026-12-06, stop 41), a conversational one and a console / app one ("get rtl
    status", "landed y/n", "check mode, LAND or LOITER"), kept apart for the same reason.
    ``dev_spoken_questions.jsonl``: a tenth writer (2026-12-06, stop 43): radio chatter, question
    tags, remarks beside a question ("it's headed back isn't it", "tower, confirm ...?").
    ``dev_register_questions.jsonl``: an eleventh (stop 43): surprise, why, the past, fragments.
    The orders of ``KNOWN_SILENT`` (lcr's misses on the shipped model) are named, unchecked."""
    rows = [json.loads(line) for line in
            (ROOT / 'benchmarks/data/questions' / name).read_text().splitlines()]
    actuators = {t.name for t in router.catalog if t.kind is Kind.ACTUATOR}
    acting, silent = [], []
    for r in rows[::every]:  # the big file: a sample, every other line
        tools = set(router.route(r['request']).tools)
        if r['kind'] == 'state_question' and tools & actuators:
            acting.append((r['request'], sorted(tools)))
        if r['kind'] in ('polite_order', 'mixed') and not set(r['tools']) & actuators <= tools \
                and r['request'] not in KNOWN_SILENT:
            silent.append((r['request'], sorted(tools)))
    assert not acting and not silent


# Dev orders the shipped lcr leaves without their actuator (none on the fifteenth refit, stop
# 45: the three the fourteenth left silent, "did the package drop? and please climb to 40
# metres", "are we recording? if not start the video" and "how about you come home now", act;
# HISTORY.md). No rule drops them; a state question that acts is never listed.
KNOWN_SILENT: frozenset[str] = frozenset()


@pytest.mark.parametrize('text', ['target altitude', 'current speed setting', 'winch position',
                                  'orbit radius', 'gimbal position', 'distance home',
                                  'distance to home', 'eta to base', 'time to home', 'time left'])
def test_a_quantity_or_a_way_left_asked_without_a_verb_asks(text):
    """Terse state requests (REAL_WORDING.md): a quantity of something, how far or how long."""
    assert [m.mood.kind for m in clause_moods(text)] == [QUESTION]


@pytest.mark.parametrize('text', ['hold position', 'hole position', 'gain altitude',
                                  'altitude 50', 'orbit radius 30 m', 'reduce speed',
                                  'time to land', 'speed 20 km/h', 'target the red car'])
def test_a_quantity_with_its_change_or_its_value_stays_an_order(text):
    assert QUESTION not in [m.mood.kind for m in clause_moods(text)]


@pytest.mark.parametrize('text', [
    'get rtl status', 'RTH in progress y/n', 'landed y/n', 'land cmd done y/n',
    'read gimbal angle', 'get tether payout', 'fetch on-ground flag', 'check mode',
    'check searchlight brightness level', 'rth progress pct', 'rtl eta', 'dist to home',
    'confirm home reached', 'follow mode still on', 'winch still lowered?',
    'just checking, the motors are disarmed right?'])
def test_console_and_app_shapes_ask(text):
    """A console's getters, "y/n", "still", a participle to confirm (stop 41's dev writers)."""
    moods = [m.mood.kind for m in clause_moods(text)]
    assert QUESTION in moods and ORDER not in moods


@pytest.mark.parametrize('text', [
    'get to the roof', 'get the drone home', 'check in at the pad then land', 'drop the flag',
    'keep the light still on', 'show up over the gate', 'land now', 'set mode to land',
    'switch to loiter', 'land', 'confirm land'])
def test_getters_that_move_and_plain_orders_stay_orders(text):
    assert QUESTION not in [m.mood.kind for m in clause_moods(text)]


@pytest.mark.parametrize('text, kinds', [
    ('check mode, LAND or LOITER', [QUESTION, QUESTION]),
    ('print current flight mode, expecting RTL', [QUESTION, QUESTION]),
    ('tell me if the drone has finished coming home and landed at base',
     [QUESTION, QUESTION, QUESTION]),
    ('how about you come home now', [ORDER]),
    ('think you could bring it down now?', [ORDER]),
    ('get altitude, then land', [QUESTION, OTHER]),
])
def test_a_question_goes_on_through_modes_expectations_and_participles(text, kinds):
    assert [m.mood.kind for m in clause_moods(text)] == kinds


@pytest.mark.parametrize('text', [
    "any idea if it's heading back yet",       # "any idea" before its "if": an indirect question
    "you've landed, haven't you",              # a negative tag asks without its "?"
    "just checking it actually landed",        # checking that a subject did something
])
def test_more_questions_without_a_question_mark(text):
    assert clause_moods(text)[0].mood.kind == QUESTION


@pytest.mark.parametrize('text', ["take off, won't you", 'checking the battery then land'])
def test_an_order_with_a_tag_or_a_check_still_orders(text):
    assert clause_moods(text)[0].mood.kind != QUESTION

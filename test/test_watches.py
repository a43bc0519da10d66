"""Condition watches without ROS: the pipeline arms, the manager samples the simulator's
state machine through fakes of the node's dispatcher and sampler, fires once, expires, cancels."""
from __future__ import annotations

import pytest

from tool_router.common.conditions import decode_reading, parse_condition
from tool_router.executor.config import load_executor_config
from tool_router.executor.dispatch import DispatchResult, Mode
from tool_router.executor.permissions import PermissionPolicy, load_permissions
from tool_router.executor.pipeline import ExecutionPipeline, condition_order
from tool_router.sim.vehicle import SimVehicle
from tool_router.executor.traces import (ConfirmationOutcome, TraceWriter, WatchRecord,
                                         open_watches, read_traces, summarize)
from tool_router.executor.sampling import Reading, SensorReadError
from tool_router.executor.watches import WatchManager
from fakes import make_selection

DEMO = 'monitor the battery and land when it drops below 25%'


class Clock:
    def __init__(self):
        self.t = 1_000.0

    def __call__(self):
        return self.t


class Rig:
    """Pipeline + watch manager over one simulated vehicle, one fake clock."""

    def __init__(self, catalog, *, confirm='approved', mode=Mode.EXECUTE, ttl_s=600.0,
                 max_watches=32, drain=1.0, battery=30.0):
        self.clock = Clock()
        self.vehicle = SimVehicle(clock=self.clock, battery_pct=battery, drain_pct_per_s=drain)
        self.calls: list[str] = []
        self.asked: list[str] = []
        self.records: list = []
        self.events: list[WatchRecord] = []
        self.confirm_outcome = confirm
        self.broken: set[str] = set()
        rules = load_permissions(load_executor_config().resolved_permissions(), catalog)
        self.watches = WatchManager(self, self.fire, self.events.append, ttl_s=ttl_s,
                                    max_watches=max_watches, clock=self.clock)
        self.pipe = ExecutionPipeline(catalog, PermissionPolicy(rules, catalog, clock=self.clock),
                                      load_executor_config().parsed_bindings(), self, self,
                                      mode=mode, watches=self.watches, clock=self.clock)

    # Dispatcher
    def dispatch(self, tool, binding, request_id, request_text, timeout_s):
        self.calls.append(tool)
        answer = self.vehicle.command(tool)
        return DispatchResult(answer.ok, answer.message, '' if answer.ok else 'call_failed')

    # Confirmer
    def confirm(self, requests):
        self.asked += [r.tool for r in requests]
        return {r.tool: ConfirmationOutcome(outcome=self.confirm_outcome, operator_name='op')
                for r in requests}

    # Sampler
    def read(self, sensor):
        if sensor in self.broken:
            raise SensorReadError(f'{sensor}: service not available')
        values = decode_reading(self.vehicle.command(sensor).message)
        return Reading(sensor=sensor, values=values, stamp=self.clock(), source='sim')

    def fire(self, watch):
        self.records.append(self.pipe.process(make_selection(
            watch.request_id, request_text=watch.request_text, tools=[watch.tool],
            fired_by=watch.watch_id)))

    def fly(self):
        assert self.vehicle.command('arm_motors').ok and self.vehicle.command('takeoff').ok

    def run(self, seconds, step=0.5):
        for _ in range(int(seconds / step)):
            self.clock.t += step
            self.watches.tick()


def demo_selection(order=('land', 'battery_status')):
    conditions = {'land': 'when it drops below 25%', 'battery_status': ''}
    return make_selection('demo', request_text=DEMO, tools=list(order),
                     scores=[0.9, 0.8], clause_index=[1, 2],
                     conditions=[conditions[t] for t in order])


def test_sensor_named_by_a_condition_is_read_before_the_gated_action():
    sel, parsed = condition_order(demo_selection())
    assert sel.tools == ['battery_status', 'land']
    assert [c.condition for c in sel.choices] == ['', 'when it drops below 25%']
    assert [c.clause_index for c in sel.choices] == [2, 1]
    assert parsed[1].describe() == 'battery_status.battery_pct < 25 %'
    unchanged, _ = condition_order(demo_selection(('battery_status', 'land')))
    assert unchanged.tools == ['battery_status', 'land']


def test_battery_watch_lands_once_at_25_percent(catalog):
    rig = Rig(catalog)
    rig.fly()
    rec = rig.pipe.process(demo_selection())
    assert [t.tool for t in rec.tools] == ['battery_status', 'land']
    assert [t.outcome for t in rec.tools] == ['dispatched', 'armed']
    assert rig.calls == ['battery_status'] and rec.tools[1].watch_id
    assert 'battery_status.battery_pct < 25 %' in rec.tools[1].message
    assert [e.event for e in rig.events] == ['armed']
    rig.run(4.0)  # 30 % -> 26 %: still flying
    assert rig.vehicle.state.phase == 'airborne' and not rig.records
    rig.run(10.0)
    assert rig.vehicle.state.phase == 'landed'
    assert [e.event for e in rig.events] == ['armed', 'fired']
    fired = rig.events[1]
    assert fired.value < 25.0 and fired.value > 24.0 and fired.watch_id == rec.tools[1].watch_id
    assert rig.calls.count('land') == 1  # once, although the battery keeps below 25 %
    (action,) = rig.records
    assert action.request_id == 'demo' and action.tools[0].outcome == 'dispatched'
    assert action.notes == [f'fired by watch {fired.watch_id}']
    assert rig.watches.snapshot() == []


def test_permission_is_decided_when_the_watch_fires(catalog):
    rig = Rig(catalog, confirm='denied')
    rig.fly()
    sel = make_selection('r2', request_text='cut the motors if you see a person',
                    tools=['emergency_stop'], conditions=['if you see a person'])
    rec = rig.pipe.process(sel)
    assert rec.tools[0].outcome == 'armed' and rig.asked == []  # nobody asked at arming
    rig.run(1.0)
    assert rig.asked == ['emergency_stop']  # asked when it fired ...
    assert rig.records[0].tools[0].outcome == 'denied'  # ... and the operator said no
    assert 'emergency_stop' not in rig.calls and rig.vehicle.state.phase == 'airborne'


def test_watch_expires_after_its_ttl_and_runs_nothing(catalog):
    rig = Rig(catalog, ttl_s=5.0, drain=0.0)
    rig.fly()
    rig.pipe.process(demo_selection())
    rig.run(6.0)
    assert [e.event for e in rig.events] == ['armed', 'expired']
    assert 'within 5 s' in rig.events[1].reason and rig.events[1].samples >= 8
    assert 'land' not in rig.calls and rig.records == []


def test_cancel_by_id_and_by_request(catalog):
    rig = Rig(catalog, drain=0.0)
    rig.fly()
    first = rig.pipe.process(demo_selection()).tools[1].watch_id
    rig.pipe.process(make_selection('other', tools=['return_to_home'],
                               conditions=['after 30 seconds']))
    assert len(rig.watches.snapshot()) == 2
    assert rig.watches.cancel(watch_id='w-nope') == []
    assert [w.watch_id for w in rig.watches.cancel(watch_id=first)] == [first]
    assert [w.request_id for w in rig.watches.cancel(request_id='other')] == ['other']
    rig.run(40.0)
    assert [e.event for e in rig.events] == ['armed', 'armed', 'cancelled', 'cancelled']
    assert rig.records == [] and len(rig.watches.snapshot(include_ended=True)) == 2


def test_time_condition_fires_after_the_delay(catalog):
    rig = Rig(catalog, drain=0.0)
    rig.fly()
    rig.pipe.process(make_selection('t', tools=['return_to_home'],
                               conditions=['after 30 seconds']))
    rig.run(29.0)
    assert rig.records == []
    rig.run(1.5)
    assert rig.records[0].tools[0].outcome == 'dispatched' and rig.vehicle.state.phase == 'landed'


def test_a_waypoint_watch_fires_when_the_mission_reaches_that_item(catalog):
    # 'run the mission and at waypoint 4 take a photo': the simulator's 8 items over 30 s
    rig = Rig(catalog, drain=0.0)
    rig.fly()
    rec = rig.pipe.process(make_selection('wp', tools=['execute_mission', 'rgb_camera'],
                                          conditions=['', 'at waypoint 4']))
    assert [t.outcome for t in rec.tools] == ['dispatched', 'armed']
    assert 'vehicle_state.waypoint >= 4' in rec.tools[1].message
    rig.run(14.5)  # item 3 reached at 11.25 s, item 4 at 15 s
    assert rig.vehicle.state.waypoint == 3 and rig.records == []
    rig.run(1.0)
    assert [r.tools[0].tool for r in rig.records] == ['rgb_camera']
    assert rig.events[-1].event == 'fired' and rig.events[-1].value == 4
    rig.run(20.0)  # the mission ends: the watch fired once
    state = rig.vehicle.snapshot()
    assert (state['mission'], state['waypoint']) == ('finished', 8)
    assert len(rig.records) == 1


def test_the_waypoint_count_follows_the_mission_and_ends_with_it(catalog):
    # derived from the mission each time the vehicle advances: none once the motors are cut
    rig = Rig(catalog, drain=0.0)
    rig.fly()
    assert rig.vehicle.command('execute_mission').ok
    rig.clock.t += 10.0  # 8 items over 30 s
    assert rig.vehicle.snapshot()['waypoint'] == 2
    assert rig.vehicle.command('emergency_stop').ok
    assert (rig.vehicle.snapshot()['mission'], rig.vehicle.snapshot()['waypoint']) == ('none', 0)


def test_a_wait_longer_than_the_ttl_still_fires(catalog):
    rig = Rig(catalog, drain=0.0, ttl_s=60.0)
    rig.fly()
    rec = rig.pipe.process(make_selection('t20', tools=['return_to_home'],
                                     conditions=['after 20 minutes']))
    (watch,) = rig.watches.snapshot()
    assert watch.expires_at == pytest.approx(rig.clock() + 1200.0 + 60.0)
    assert 'expires in 1260 s' in rec.tools[0].message
    rig.run(1199.0, step=1.0)
    assert rig.records == []
    rig.run(2.0, step=1.0)
    assert [e.event for e in rig.events] == ['armed', 'fired']
    assert rig.records[0].tools[0].outcome == 'dispatched'


def test_a_clock_time_that_has_passed_today_is_not_armed(catalog):
    rig = Rig(catalog)  # the rig's clock: 1000 s after midnight UTC (00:16:40)
    rec = rig.pipe.process(make_selection('late', tools=['land'],
                                     conditions=['at 00:10']))
    t = rec.tools[0]
    assert (t.outcome, t.failure_mode) == ('not_armed', 'condition_unreadable')
    assert '00:10 UTC has passed today (it is 00:16 UTC)' in t.message
    assert rig.events == [] and rig.calls == []
    rec = rig.pipe.process(make_selection('soon', tools=['land'],
                                     conditions=['at 00:30']))
    assert rec.tools[0].outcome == 'armed'
    (watch,) = rig.watches.snapshot()
    assert watch.expires_at == pytest.approx(30 * 60 + 600.0)  # the wait, then the ttl
    rig.run(800.0, step=2.0)
    assert [e.event for e in rig.events] == ['armed', 'fired'] and rig.calls == ['land']


def test_unreadable_condition_is_not_armed_and_says_why(catalog):
    rig = Rig(catalog)
    rec = rig.pipe.process(make_selection('v', tools=['wind_estimate', 'return_to_home'],
                                     conditions=['', 'if it gets too windy']))
    t = rec.tools[1]
    assert (t.outcome, t.failure_mode) == ('not_armed', 'condition_unreadable')
    assert 'no threshold' in t.message and rig.events == [] and rig.calls == ['wind_estimate']


def test_shadow_mode_arms_nothing(catalog):
    rig = Rig(catalog, mode=Mode.SHADOW)
    rec = rig.pipe.process(demo_selection())
    assert [t.outcome for t in rec.tools] == ['shadow', 'shadow']
    assert 'would' in rec.tools[1].message and rig.events == []


def test_watch_limit_and_a_failing_sensor(catalog):
    rig = Rig(catalog, max_watches=1, drain=0.0)
    rig.fly()
    rig.pipe.process(demo_selection())
    rec = rig.pipe.process(make_selection('x', tools=['land'],
                                     conditions=['if you see a person']))
    assert (rec.tools[0].outcome, rec.tools[0].failure_mode) == ('not_armed', 'watch_limit')
    rig.broken.add('battery_status')
    rig.run(1.0)
    (watch,) = rig.watches.snapshot()
    assert 'service not available' in watch.last_error and watch.state == 'armed'


def test_records_on_disk_and_restart_fold(catalog, tmp_path):
    writer = TraceWriter(tmp_path)
    rig = Rig(catalog, drain=0.0)
    rig.watches.emit = writer.write
    rig.fly()
    rig.pipe.process(demo_selection())
    rig.pipe.process(make_selection('t', tools=['return_to_home'],
                               conditions=['after 1 second']))
    rig.run(1.5)
    writer.write(rig.records[0])
    records = list(read_traces(writer.path))
    assert [getattr(r, 'event', 'request') for r in records] == \
        ['armed', 'armed', 'fired', 'request']
    left = open_watches(records)
    assert [w.request_id for w in left] == ['demo']
    summary = summarize(records)
    assert summary['watch_events'] == {'armed': 2, 'fired': 1} and summary['records'] == 1


def test_predicate_from_router_condition_text_with_connective():
    # the router passes the connective; "unless" must never become "when"
    assert parse_condition('unless the battery is above 30%').reason.startswith('"unless"')


def test_concurrent_ticks_fire_a_watch_exactly_once():
    import threading
    fired: list[str] = []
    events: list[WatchRecord] = []

    class Always:
        def read(self, sensor):
            return Reading(sensor=sensor, values={'battery_pct': 10.0}, stamp=0.0)

    manager = WatchManager(Always(), lambda w: fired.append(w.watch_id), events.append)
    predicate = parse_condition('when the battery drops below 25%')
    watches = [manager.arm(f'r{i}', 'land', predicate) for i in range(5)]
    start = threading.Barrier(4)

    def ticker():
        start.wait()
        for _ in range(50):
            manager.tick()
    threads = [threading.Thread(target=ticker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(fired) == sorted(w.watch_id for w in watches)
    assert [e.event for e in events].count('fired') == 5


def test_the_text_sampler_is_the_one_place_a_reading_is_parsed_from_an_answer():
    from tool_router.common.conditions import encode_reading
    from tool_router.executor.dispatch import parse_binding
    from tool_router.executor.sampling import BindingSampler, TextSampler

    class Answers:
        def __init__(self, message, ok=True):
            self.message, self.ok = message, ok

        def dispatch(self, tool, binding, request_id, request_text, timeout_s):
            return DispatchResult(self.ok, self.message, '' if self.ok else 'call_failed')

    bindings = {'battery_status': parse_binding('trigger:/sim/battery_status'),
                'vehicle_state': parse_binding('mavlink:state')}
    text = TextSampler(Answers(encode_reading('battery 41%', {'battery_pct': 41.0})), bindings,
                       1.0, clock=lambda: 7.0)
    reading = text.read('battery_status')
    assert reading == Reading(sensor='battery_status', values={'battery_pct': 41.0}, stamp=7.0,
                              source='trigger:/sim/battery_status')
    with pytest.raises(SensorReadError, match='without a reading'):
        TextSampler(Answers('battery 41%'), bindings, 1.0).read('battery_status')
    with pytest.raises(SensorReadError, match='service not available'):
        TextSampler(Answers('service not available', ok=False), bindings, 1.0).read(
            'battery_status')
    with pytest.raises(SensorReadError, match='no service binding'):
        text.read('gps_position')

    class Typed:
        def read(self, sensor):
            return Reading(sensor=sensor, values={'on_ground': True}, stamp=1.0, source='typed')

    from tool_router.executor.dispatch import BindingKind
    routed = BindingSampler(bindings, text, {BindingKind.MAVLINK: Typed()})
    assert routed.read('vehicle_state').source == 'typed'
    assert routed.read('battery_status').source == 'trigger:/sim/battery_status'


@pytest.mark.parametrize('text', [
    'take off, and if the wind gets above 10 m/s, land',
    'take off. If the wind gets above 10 m/s, land.',  # a new sentence (stop 49)
    'take off; wind > 10 m/s -> land'])
def test_an_order_before_a_condition_that_leads_its_own_runs_at_once(catalog, text):
    # "take off, and if the wind gets above 10 m/s, land": the condition opens its own step, so
    # the takeoff goes now and only the landing waits (the takeoff had waited for the wind)
    from tool_router.routing.policies.base import Decision, claim_clauses
    tools = ['takeoff', 'wind_estimate', 'land']
    placed = claim_clauses(Decision('cdbv3', tools, [0.9, 0.8, 0.7]), text, catalog, tools)
    assert placed.conditions.get('takeoff', '') == ''
    assert 'the wind gets above 10 m/s' in placed.conditions['land'] \
        or placed.conditions['land'] == 'wind > 10 m/s'
    rig = Rig(catalog)
    assert rig.vehicle.command('arm_motors').ok
    rec = rig.pipe.process(make_selection(
        'wind', request_text=text, tools=tools, clause_index=[placed.clause_index[t]
                                                              for t in tools],
        conditions=[placed.conditions.get(t, '') for t in tools]))
    outcome = {t.tool: t.outcome for t in rec.tools}
    assert outcome == {'takeoff': 'dispatched', 'wind_estimate': 'dispatched', 'land': 'armed'}
    assert rig.vehicle.state.phase == 'airborne' and 'land' not in rig.calls


@pytest.mark.parametrize('text', [
    'if the wind gets above 10 m/s, stop filming, land',  # the landing had run at once
    'wind > 10 m/s -> stop filming, land',
    'wind over 10 m/s: stop filming, land',  # a typed condition before a colon (stop 50)
])
def test_every_order_of_a_leading_conditions_sentence_waits(catalog, text):
    from tool_router.routing.policies.base import Decision, claim_clauses
    tools = ['wind_estimate', 'video_recorder', 'land']
    placed = claim_clauses(Decision('cdbv3', tools, [0.9, 0.8, 0.7]), text, catalog, tools)
    assert placed.conditions['video_recorder'] and placed.conditions['land']
    rig = Rig(catalog)
    rig.fly()
    rec = rig.pipe.process(make_selection(
        'wind2', request_text=text, tools=tools, clause_index=[placed.clause_index[t]
                                                               for t in tools],
        conditions=[placed.conditions.get(t, '') for t in tools]))
    outcome = {t.tool: t.outcome for t in rec.tools}
    assert outcome == {'wind_estimate': 'dispatched', 'video_recorder': 'armed', 'land': 'armed'}
    assert rig.vehicle.state.phase == 'airborne' and 'land' not in rig.calls


@pytest.mark.parametrize('start, later, waits_for', [(30.0, 1.5, '<='), (0.0, 2.5, '>=')])
def test_an_altitude_reached_without_a_direction_is_reached_from_where_the_vehicle_is(
        catalog, start, later, waits_for):
    # "when it's 2 m off the ground, release the load" on the way down had fired at once at
    # 30 m (>= 2 m held); on the ground it still waits for the climb
    rig = Rig(catalog)
    rig.fly()
    rig.vehicle.state.altitude_m = start
    predicate = parse_condition("when it's 2 m off the ground")
    assert predicate.either_side and predicate.op == '>='
    rig.watches.arm('r1', 'winch_control', predicate, "when it's 2 m off the ground, lower it")
    rig.run(2)
    assert rig.records == []
    settled = [e for e in rig.events if e.event == 'armed' and 'waits for' in e.reason]
    assert len(settled) == 1 and f'altitude_m {waits_for} 2 m' in settled[0].predicate
    rig.vehicle.state.altitude_m = later
    rig.run(1)
    assert [e.event for e in rig.events][-1] == 'fired'
    assert len(rig.records) == 1


def test_a_condition_held_for_a_time_fires_only_after_it_held_that_long_without_a_break(catalog):
    # "if the battery is below 20% for 5 s, land": a dip shorter than 5 s fires nothing, and a
    # gap in the readings starts the count again (stop 50; it had been refused)
    rig = Rig(catalog)
    rig.fly()
    predicate = parse_condition('if the battery is below 20% for 5 s')
    assert predicate.held_s == 5.0 and predicate.describe().endswith('for 5 s')
    rig.watches.arm('r1', 'land', predicate, 'if the battery is below 20% for 5 s, land')
    rig.vehicle.state.battery_pct = 15.0
    rig.run(3)
    rig.vehicle.state.battery_pct = 60.0  # back up before 5 s: the count starts again
    rig.run(1)
    rig.vehicle.state.battery_pct = 15.0
    rig.run(3)
    assert rig.records == []
    rig.broken.add('battery_status')  # a gap in the readings: no proof it held
    rig.run(1)
    rig.broken.discard('battery_status')
    rig.run(4)
    assert rig.records == []
    rig.run(2)
    assert len(rig.records) == 1 and rig.records[0].tools[0].tool == 'land'
    assert 'for 5 s' in [e for e in rig.events if e.event == 'fired'][0].reason

"""The README's MAVLink flow, flown on a strict ArduCopter and a strict PX4 (real UDP, 127.0.0.1).

arm -> confirm -> take off to 20 m -> fly to a point at 25 m and photograph -> return home ->
a second flight whose landing waits for the battery. Each step is checked on the vehicle's
side (the simulator's own state), not only in the trace: the take-off reaches 20 m above home,
the reposition arrives at the point and height, the photo is taken there, RTL lands at home
and disarms, the second arm works from wherever the first flight left the mode, and the
battery watch lands the vehicle.
"""
from __future__ import annotations

import pytest

pytest.importorskip('pymavlink')

from mavlink_rig import make_rig, wait_for  # noqa: E402
from tool_router.common.conditions import distance_m  # noqa: E402
from tool_router.executor.mavlink import MavlinkSampler  # noqa: E402
from fakes import make_selection
from tool_router.executor.pipeline import Selection  # noqa: E402
from tool_router.executor.watches import WatchManager  # noqa: E402

pytestmark = pytest.mark.slow
POINT = (47.3980, 8.5460)


@pytest.fixture(params=['ardupilot', 'px4'])
def rig(request, catalog):
    rig = make_rig(catalog, request.param, sim_kwargs={'drain_pct_per_s': 0.0})
    fired = []
    rig.watches = WatchManager(MavlinkSampler(rig.link), fired.append, lambda record: None)
    rig.fired = fired
    rig.pipe.watches = rig.watches
    yield rig
    rig.close()


def messages(record):
    return [(t.tool, t.outcome, t.failure_mode, t.message) for t in record.tools]


def test_readme_flow_flies_on_both_autopilots(rig):
    sim = rig.sim
    px4 = sim.px4
    # 1. arm -> confirm -> take off to 20 m
    record, t = rig.run(['arm_motors', 'takeoff'], 'arm the motors and take off to 20 m', 'f1')
    assert [x.outcome for x in record.tools] == ['dispatched'] * 2, messages(record)
    assert rig.approver.asked == ['arm_motors']
    if px4:
        assert 'switched' not in t['arm_motors'].message  # PX4 arms in Hold, where it booted
        assert ', mode AUTO_TAKEOFF:' in t['takeoff'].message
    else:  # ArduCopter boots in STABILIZE: GUIDED first, and the trace says so
        assert 'mode GUIDED (switched from STABILIZE first; not asked for by the request)' in \
            t['arm_motors'].message
        assert 'MAV_CMD_DO_SET_MODE' in rig.flight_commands()
    assert 'MAV_CMD_NAV_TAKEOFF to 20 m above home (508.0 m AMSL)' in t['takeoff'].message
    assert 'reached' in t['takeoff'].message
    assert abs(sim.snapshot()['alt'] - 20.0) < 1.0  # the vehicle climbed to 20 m above home
    assert wait_for(lambda: abs(sim.snapshot()['alt'] - 20.0) < 0.1, timeout_s=10.0)
    # 2. fly to a point at 25 m and photograph it
    record, t = rig.run(['goto_waypoint', 'rgb_camera'],
                        'fly to 47.3980, 8.5460 at 25 m and take a photo', 'f2')
    assert record.stop_reason == 'completed', messages(record)
    assert ('MAV_CMD_DO_REPOSITION to 47.398000,8.546000 at 25 m above home (513.0 m AMSL), '
            f'mode {"AUTO_LOITER" if px4 else "GUIDED"}: accepted; reached') in \
        t['goto_waypoint'].message
    snap = sim.snapshot()
    assert distance_m(snap['lat'], snap['lon'], *POINT) < 1.5 and abs(snap['alt'] - 25.0) < 1.0
    (lat, lon, alt), = snap['photos']  # one photo, taken at the point
    assert distance_m(lat, lon, *POINT) < 1.5 and abs(alt - 25.0) < 1.0
    # 3. return home: RTL is flown, the vehicle lands at home and disarms
    record, t = rig.run(['return_to_home'], 'return home', 'f3')
    assert t['return_to_home'].outcome == 'dispatched', messages(record)
    assert f', mode {"AUTO_RTL" if px4 else "RTL"}, at 2' in t['return_to_home'].message
    assert wait_for(lambda: rig.state().get('phase') == 'disarmed', timeout_s=60.0)
    snap = sim.snapshot()
    assert distance_m(snap['lat'], snap['lon'], *sim.home) < 1.0 and snap['alt'] == 0.0
    assert rig.state()['mode'] == ('AUTO_LOITER' if px4 else 'RTL')  # where each stack rests
    # 4. the second flight: arming again works from there
    record, t = rig.run(['arm_motors', 'takeoff'], 'arm the motors and take off to 20 m', 'f4')
    assert [x.outcome for x in record.tools] == ['dispatched'] * 2, messages(record)
    if not px4:  # RTL does not allow arming: GUIDED first, traced
        assert 'switched from RTL first' in t['arm_motors'].message
    # 5. "monitor the battery and land when it drops below 25%"
    sel = make_selection('f5', request_text='monitor the battery and land when it drops '
                         'below 25%', tools=['battery_status', 'land'], scores=[0.9, 0.9],
                         conditions=['', 'when it drops below 25%'])
    record = rig.pipe.process(sel)
    assert [x.outcome for x in record.tools] == ['dispatched', 'armed'], messages(record)
    rig.watches.tick()
    assert not rig.fired and snap['phase'] != 'landing'
    with sim.lock:
        sim.state.battery_pct = 23.0
    assert wait_for(lambda: rig.watches.tick() or rig.fired, timeout_s=20.0)
    watch = rig.fired[0]
    record = rig.pipe.process(Selection.of('f6', [watch.tool], request_text=watch.request_text,
                                           fired_by=watch.watch_id))
    (land,) = record.tools
    assert (land.tool, land.outcome) == ('land', 'dispatched'), messages(record)
    assert f'MAV_CMD_NAV_LAND, mode {"AUTO_LAND" if px4 else "LAND"}' in land.message
    assert wait_for(lambda: rig.state().get('phase') == 'disarmed', timeout_s=60.0)
    assert sim.snapshot()['alt'] == 0.0
    assert rig.link.read('link_quality')['packet_loss_pct'] == 0.0  # lossless localhost


def test_a_waypoint_watch_reads_the_missions_items_alike_on_both_autopilots(rig):
    # ArduPilot's MISSION_CURRENT counts home as item 0, PX4's does not: "at waypoint 2" is the
    # second item a ground station shows on both, and the reading agrees with the vehicle's own
    sim = rig.sim
    record, _ = rig.run(['arm_motors', 'takeoff'], 'arm the motors and take off to 20 m', 'w1')
    assert [x.outcome for x in record.tools] == ['dispatched'] * 2, messages(record)
    record, t = rig.run(['execute_mission'], 'run the mission', 'w2')
    assert t['execute_mission'].outcome == 'dispatched', messages(record)
    assert wait_for(lambda: rig.state().get('mission') == 'running', timeout_s=10.0)
    sel = make_selection('w3', request_text='at waypoint 2 take a photo', tools=['rgb_camera'],
                         conditions=['at waypoint 2'])
    record = rig.pipe.process(sel)
    assert [x.outcome for x in record.tools] == ['armed'], messages(record)
    assert 'vehicle_state.waypoint >= 2' in record.tools[0].message
    seen = []

    def reached_two():
        with sim.lock:  # the vehicle's own count of items reached, then the executor's reading
            own = sim.state.mission_index if sim.state.mission_state == 3 else len(sim.mission)
        seen.append((own, rig.state().get('waypoint')))
        return rig.watches.tick() or rig.fired
    assert wait_for(reached_two, timeout_s=90.0)
    assert rig.fired[0].tool == 'rgb_camera'
    with sim.lock:
        assert sim.state.mission_index >= 2 or sim.state.mission_state == 5
    # a reading at most one MISSION_CURRENT behind the vehicle, never ahead of it
    assert all(got is None or own - 1 <= got <= own for own, got in seen), seen
    assert any(got == 1 for _, got in seen), seen

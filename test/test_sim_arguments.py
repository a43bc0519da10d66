"""The request's values reach the simulated vehicle: executor and simulator as real processes.

"take off to 20 m" ends at 20 m, a goto reaches the coordinates it was given, what the
vehicle cannot do is refused with the reason (traced ``failed`` with that failure mode), and
``battery_pct`` set at run time changes what a battery reading says. Pure parts first.
"""
from __future__ import annotations

import json

import pytest
from procs import wait_until

from tool_router.common.conditions import decode_reading
from tool_router.common.errors import ConfigError
from tool_router.executor.arguments import ArgumentError
from tool_router.executor.dispatch import BindingKind, call_arguments, parse_binding

ALLOW_ALL = """version: 1
defaults:
  none: allow
  motion: allow
  payload: allow
  critical: allow
"""


def test_call_bindings_parse_and_carry_the_request_values():
    binding = parse_binding('call:sim/tool_call')
    assert (binding.kind, binding.name, binding.spec) == (BindingKind.CALL, 'sim/tool_call',
                                                          'call:sim/tool_call')
    assert parse_binding('call:sim/tool_call=false').value is False
    with pytest.raises(ConfigError):
        parse_binding('trigger:sim/x=true')
    assert call_arguments('takeoff', binding, 'arm and take off to 20 m') == {'height_m': 20.0}
    assert call_arguments('takeoff', binding, 'take off') == {}
    assert call_arguments('goto_waypoint', binding, 'fly to 47.3985, 8.5466 at 30 m') == \
        {'lat': 47.3985, 'lon': 8.5466, 'altitude_m': 30.0}
    assert call_arguments('spotlight', binding, 'switch the spotlight off') == {'on': False}
    assert call_arguments('land', binding, 'land at 47.1, 8.2') == {}
    with pytest.raises(ArgumentError):
        call_arguments('set_altitude', binding, 'climb a bit')


@pytest.mark.slow  # starts ROS processes
def test_the_request_values_reach_the_vehicle_over_dds(tmp_path):
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    from rclpy.qos import DurabilityPolicy, QoSProfile
    from std_msgs.msg import String
    from test_executor_nodes import UNSIGNED, RosPeer, read_records, start
    perms = tmp_path / 'permissions.yaml'
    perms.write_text(ALLOW_ALL)
    traces = tmp_path / 'traces'
    sim = start('tool_router.ros.sim_vehicle', '-p', 'battery_drain_pct_per_s:=0.0',
                ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', '-p', f'permissions_file:={perms}',
                     '-p', f'trace_dir:={traces}', '-p', 'call_timeout_s:=10.0', *UNSIGNED,
                     ready='executor ready')
    peer = RosPeer()
    try:
        states = peer.watch(String, '/sim/state',
                            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))

        def state():
            assert wait_until(lambda: bool(states), 30)
            return json.loads(states[-1].data)

        def run(tools, text):
            rid = peer.select('/tool_router/selected', tools, text)
            found = []
            assert wait_until(lambda: found.extend(
                r for r in read_records(traces)
                if r['request_id'] == rid and 'tools' in r) or found, 60), executor.output
            return {t['tool']: t for t in found[0]['tools']}

        took = run(['arm_motors', 'takeoff'], 'arm the motors and take off to 20 m')
        assert [t['outcome'] for t in took.values()] == ['dispatched', 'dispatched'], took
        assert took['takeoff']['message'] == 'took off, holding at 20.0 m'
        assert wait_until(lambda: state()['altitude_m'] == 20.0, 30), state()

        went = run(['goto_waypoint'], 'fly to 47.3985, 8.5466 at 30 m')['goto_waypoint']
        assert went['outcome'] == 'dispatched', went
        assert wait_until(lambda: (state()['lat'], state()['lon'], state()['altitude_m']) ==
                          (47.3985, 8.5466, 30.0), 30), state()

        turned = run(['set_heading'], 'turn to heading 270 degrees')['set_heading']
        assert turned['message'] == 'turned to heading 270 deg', turned

        # the executor refuses a missing value before anything is sent ...
        vague = run(['set_altitude'], 'climb a bit')['set_altitude']
        assert (vague['outcome'], vague['failure_mode']) == ('failed', 'missing_argument')
        assert 'nothing sent' in vague['message']
        # ... and the vehicle what it cannot do, with the reason
        far = run(['goto_waypoint'], 'fly to 47.4100, 8.5600')['goto_waypoint']
        assert (far['outcome'], far['failure_mode']) == ('failed', 'outside_limits'), far
        assert 'geofence' in far['message']
        high = run(['set_altitude'], 'climb to 500 m')['set_altitude']
        assert (high['outcome'], high['failure_mode']) == ('failed', 'outside_limits'), high
        assert (state()['lat'], state()['altitude_m']) == (47.3985, 30.0)  # unchanged

        # battery_pct at run time: the next battery reading says so; out of range is refused
        def set_battery(value):
            if isinstance(value, str):
                given = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)
            elif isinstance(value, int):
                given = ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=value)
            else:
                given = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)
            request = SetParameters.Request(parameters=[Parameter(name='battery_pct',
                                                                  value=given)])
            return peer.call(SetParameters, '/sim_vehicle/set_parameters', request).results[0]
        assert set_battery(50).successful  # an integer, as `ros2 param set ... 50` sends it
        assert wait_until(lambda: state()['battery_pct'] == 50.0, 30)
        assert set_battery(27.9).successful
        for bad in (150.0, 150, -1.0, 'full'):
            result = set_battery(bad)
            assert not result.successful and 'battery_pct' in result.reason, (bad, result)
        battery = run(['battery_status'], 'how is the battery')['battery_status']
        reading = decode_reading(battery['message'])
        assert reading['battery_pct'] == 27.9, battery
        assert 'no drain configured' in battery['message']  # drain 0: no time-left guess
        assert wait_until(lambda: state()['battery_pct'] == 27.9, 30)
    finally:
        peer.close()
        codes = [p.stop() for p in (executor, sim)]
    assert codes == [0, 0]

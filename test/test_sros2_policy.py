"""The shipped SROS2 policy names the shipped interfaces; only the executor reaches the vehicle.

DDS Security itself cannot run here (PyPI Fast DDS is built without it): this checks the files.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tool_router.executor.config import load_executor_config
from tool_router.common.paths import config_path


def enclaves() -> dict[str, dict[str, set[str]]]:
    root = ET.parse(config_path('sros2/policy.xml')).getroot()
    out: dict[str, dict[str, set[str]]] = {}
    for enclave in root.iter('enclave'):
        rights: dict[str, set[str]] = {}
        for group in enclave.iter():
            for verb in ('publish', 'subscribe', 'request', 'reply'):
                if group.get(verb) == 'ALLOW':
                    rights.setdefault(verb, set()).update(
                        '/' + (e.text or '').strip() for e in group)
        out[enclave.get('path', '')] = rights
    return out


def test_policy_covers_the_shipped_names_and_keeps_the_control_plane_narrow():
    e = enclaves()
    shipped = load_executor_config()
    # shipped names are relative (they follow the node's namespace): in the root namespace
    # they resolve to /<name>, which is what the policy grants
    c = shipped.model_copy(update={
        k: '/' + v.lstrip('/') for k in ('confirm_service', 'selection_topic', 'trace_topic',
                                          'confirmation_topic', 'watch_events_topic')
        for v in [getattr(shipped, k)]})
    executor, operator = e['/tool_router/executor'], e['/tool_router/operator']
    assert c.confirm_service in executor['reply'] and c.confirm_service in operator['request']
    assert c.selection_topic in executor['subscribe']
    assert {c.trace_topic, c.confirmation_topic, c.watch_events_topic} <= executor['publish']
    assert '/route_request' in e['/tool_router/router']['reply']
    assert c.selection_topic in e['/tool_router/router']['publish']
    # the executor's acks: it publishes them, the router reads them, nobody else writes them
    assert '/executor/acks' in executor['publish']
    assert '/executor/acks' in e['/tool_router/router']['subscribe']
    assert all('/executor/acks' not in rights.get('publish', set())
               for path, rights in e.items() if path != '/tool_router/executor')
    # nobody but the router publishes selections; nobody but the executor calls the vehicle
    for path, rights in e.items():
        if path != '/tool_router/router':
            assert c.selection_topic not in rights.get('publish', set()), path
        if path != '/tool_router/executor':
            assert '/sim/*' not in rights.get('request', set()), path
    assert not e['/tool_router/observer'].get('publish')
    assert c.confirm_service not in e['/tool_router/observer'].get('request', set())


def test_governance_refuses_unauthenticated_participants():
    root = ET.parse(config_path('sros2/governance.xml')).getroot()
    assert root.findtext('.//allow_unauthenticated_participants') == 'false'
    assert root.findtext('.//data_protection_kind') == 'ENCRYPT'


def profile_rights() -> dict[str, dict[str, list[str]]]:
    """Per node name of a profile: the fully qualified name patterns it may use, per verb."""
    root = ET.parse(config_path('sros2/policy.xml')).getroot()
    out: dict[str, dict[str, list[str]]] = {}
    for profile in root.iter('profile'):
        node = profile.get('node', '')
        rights = out.setdefault(node, {})
        for group in profile:
            for verb in ('publish', 'subscribe', 'request', 'reply'):
                if group.get(verb) == 'ALLOW':
                    for e in group:
                        name = (e.text or '').strip()
                        full = f'/{node}/{name[2:]}' if name.startswith('~/') else '/' + name
                        rights.setdefault(verb, []).append(full)
    return out


@pytest.mark.slow
def test_every_topic_and_service_the_nodes_create_is_in_the_policy(tmp_path):
    """Start the three nodes as shipped (root namespace); read what each created from the DDS
    graph; every publisher, subscription, service and client must be granted to its node's
    profile (SROS2 denies the rest: a missing name is a node that cannot start or talk)."""
    from fnmatch import fnmatchcase

    from procs import NodeProcess, wait_until
    from test_executor_nodes import RosPeer, start

    router = NodeProcess('tool_router.ros.router_node', '-p', 'chroma_ephemeral:=true')
    sim = start('tool_router.ros.sim_vehicle', ready='simulated vehicle ready')
    executor = start('tool_router.ros.executor_node', '-p', f'trace_dir:={tmp_path}',
                     '-p', 'require_signed_execute:=false', ready='executor ready')
    peer = RosPeer()
    rights = profile_rights()
    missing: list[str] = []
    try:
        assert router.wait_for('serving /route_request', 180), router.output
        node = peer.node
        for name, verbs in (('router_node', None), ('executor_node', None),
                            ('sim_vehicle', None)):
            assert wait_until(lambda: name in node.get_node_names(), 60), name
            queries = {
                'publish': node.get_publisher_names_and_types_by_node,
                'subscribe': node.get_subscriber_names_and_types_by_node,
                'reply': node.get_service_names_and_types_by_node,
                'request': node.get_client_names_and_types_by_node,
            }
            # what a node creates appears on our graph over a few discovery rounds
            seen: dict[str, set[str]] = {}

            def settled() -> bool:
                now = {verb: {n for n, _ in q(name, '/')} for verb, q in queries.items()}
                done = now == seen and bool(now['reply'])
                seen.clear()
                seen.update(now)
                return done
            assert wait_until(settled, 60, step_s=2.0), name
            for verb, names in seen.items():
                allowed = rights.get(name, {}).get(verb, [])
                missing += [f'{name} {verb} {n}' for n in sorted(names)
                            if not any(fnmatchcase(n, p) for p in allowed)]
    finally:
        peer.close()
        for p in (executor, sim, router):
            p.stop()
    assert not missing, '\n'.join(missing)

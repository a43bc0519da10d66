"""The shipped SROS2 policy names the shipped interfaces; only the executor reaches the vehicle.

DDS Security itself cannot run here (PyPI Fast DDS is built without it): this checks the files.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

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

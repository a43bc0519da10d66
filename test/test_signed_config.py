"""Signed run-time configuration changes (issue 26 item 1): the pure parts.

The payload a change's signature covers, the admin-only verifier, what a change may touch
(:func:`tool_router.routing.signed_config.staged`), the journal and its refusal budget. The
real router process and a keyless attacker: test/test_config_set.py.
"""
from __future__ import annotations

import json

import pytest

from tool_router.common import signing
from tool_router.common.errors import ConfigError
from tool_router.common.nonces import NonceStore
from tool_router.executor import auth
from tool_router.routing import signed_config
from tool_router.routing.config import load_router_config, router_doors
from tool_router.routing.signed_config import (REFUSALS_PER_WINDOW, ConfigChange,
                                               ConfigJournal, staged)

NODE = '/uav1/router_node'


def test_the_payload_binds_node_names_values_and_types_not_their_order():
    a = signing.config_payload(NODE, {'policy': 'cdbv3', 'max_tools': 2}, 1.5, 'n' * 16, 'k1')
    b = signing.config_payload(NODE, {'max_tools': 2, 'policy': 'cdbv3'}, 1.5, 'n' * 16, 'k1')
    assert a == b and a.startswith(b'tool_router/config/v1\n')
    others = [
        signing.config_payload('/uav2/router_node', {'policy': 'cdbv3', 'max_tools': 2}, 1.5,
                               'n' * 16, 'k1'),
        signing.config_payload(NODE, {'policy': 'cdbv3', 'max_tools': 3}, 1.5, 'n' * 16, 'k1'),
        signing.config_payload(NODE, {'policy': 'cdbv3', 'max_tools': '2'}, 1.5, 'n' * 16, 'k1'),
        signing.config_payload(NODE, {'policy': 'cdbv3'}, 1.5, 'n' * 16, 'k1'),
        signing.config_payload(NODE, {'policy': 'cdbv3', 'max_tools': 2}, 1.6, 'n' * 16, 'k1'),
    ]
    assert all(o != a for o in others) and len(set(others)) == len(others)
    # one field cannot slide into the next (length-prefixed)
    assert (signing.config_payload(NODE, {'a': 'b=1'}, 1.0, 'n' * 16, 'k')
            != signing.config_payload(NODE, {'a=b': 1}, 1.0, 'n' * 16, 'k'))


@pytest.fixture
def operators(tmp_path):
    path = tmp_path / 'operators.yaml'
    auth.add_operator(path, 'root', 'admin')
    auth.add_operator(path, 'alice', 'pilot')
    return path


def _verifier(path, clock=lambda: 1000.0, nonces=None):
    return auth.ConfirmationVerifier.from_file(path, lambda tool: 'none', 30.0, clock, nonces)


def _signed(path, name, changes, node=NODE, at=1000.0):
    key, key_id = auth.signing_key(path, name)
    return signing.sign_config(key, key_id, node, changes, clock=lambda: at)


def _check(verifier, s, node=NODE, changes=None):
    return verifier.verify_config(node, s.changes if changes is None else changes, s.timestamp,
                                  s.nonce, s.key_id, s.signature)


def test_only_an_admins_fresh_signature_for_this_node_changes_the_configuration(operators):
    v = _verifier(operators)
    ok = _signed(operators, 'root', {'policy': 'cdbv3'})
    verdict = _check(v, ok)
    assert verdict.ok and verdict.operator_name == 'root'
    assert _check(v, ok).reason == 'replayed_nonce'
    pilot = _check(v, _signed(operators, 'alice', {'policy': 'cdbv3'}))
    assert pilot.reason == 'role_not_allowed' and 'needs admin' in pilot.detail
    assert _check(v, _signed(operators, 'root', {'policy': 'cdbv3'}, at=900.0)).reason == 'stale'
    other_node = _signed(operators, 'root', {'policy': 'cdbv3'}, node='/uav2/router_node')
    assert _check(v, other_node).reason == 'bad_signature'
    moved = _signed(operators, 'root', {'policy': 'cdbv3'})
    assert _check(v, moved, changes={'policy': 'cdbv1'}).reason == 'bad_signature'
    assert v.verify_config(NODE, {'policy': 'x'}, 1000.0, '', '', '').reason == 'unsigned'


def test_a_file_without_the_admin_role_gives_nobody_the_right(tmp_path):
    path = tmp_path / 'operators.yaml'
    auth.add_operator(path, 'root', 'admin')
    data = auth.load_operators_file(path)
    data.config_roles = ['superuser']  # a role the file does not define
    auth.save_operators_file(path, data)
    verdict = _check(_verifier(path), _signed(path, 'root', {'policy': 'cdbv3'}))
    assert verdict.reason == 'role_not_allowed'


def test_a_restart_forgets_no_nonce(operators, tmp_path):
    file = tmp_path / 'nonces.jsonl'
    s = _signed(operators, 'root', {'max_tools': 3})
    assert _check(_verifier(operators, nonces=NonceStore(file, 60.0, lambda: 1000.0)), s).ok
    again = _verifier(operators, nonces=NonceStore(file, 60.0, lambda: 1001.0))  # a new process
    assert _check(again, s).reason == 'replayed_nonce'


def test_what_a_signed_change_may_touch():
    config = load_router_config()
    new, diff = staged(config, {'lcr.threshold': 0.5, 'policy': 'cdbv3', 'max_tools': 8})
    assert new.policy == 'cdbv3' and new.lcr.threshold == 0.5
    assert diff == {'lcr.threshold': (-1.0, 0.5), 'policy': ('lcr', 'cdbv3')}  # 8 was 8
    assert config.policy == 'lcr'  # the running configuration is not touched
    with pytest.raises(ConfigError, match=r"'polcy' \(did you mean 'policy'\?\)"):
        staged(config, {'polcy': 'cdbv3'})
    for name, value in (('serving.threads', 2), ('model', 'x'), ('chroma_path', '/tmp'),
                        ('router_key_file', '/tmp/k'), ('operators_file', '/tmp/o.yaml'),
                        ('selection_topic', 'x')):
        with pytest.raises(ConfigError, match='restart the node'):
            staged(config, {name: value})
    with pytest.raises(ConfigError, match='max_tools'):
        staged(config, {'max_tools': 0})
    with pytest.raises(ConfigError, match='no change'):
        staged(config, {})
    # every name a signed change may set is a name the node declares (and is fixed otherwise)
    doors = router_doors()
    assert doors.signed <= doors.fixed | doors.writable
    assert not {'model', 'catalog', 'serving', 'operators_file', 'config_dir',
                'router_key_file', 'chroma_path'} & doors.signed


def test_the_refusal_of_a_parameter_service_names_the_signed_way_where_there_is_one():
    doors = router_doors()
    assert 'tool-router config set lcr.threshold=VALUE' in doors.refusal(['lcr.threshold'])
    assert 'config set' not in doors.refusal(['chroma_path'])
    assert 'config set' not in doors.refusal(['policy', 'chroma_path'])


def test_the_journal_is_fsyncd_lines_and_a_flood_of_refusals_is_counted(tmp_path):
    now = [0.0]
    journal = ConfigJournal(tmp_path / 'j' / 'router_node.jsonl', clock=lambda: now[0])
    journal.write(ConfigChange(event='decided', stamp=1.0, node=NODE, operator='root',
                               changes={'policy': ['lcr', 'cdbv3']}))
    kept = [journal.refused(ConfigChange(event='refused', stamp=1.0, node=NODE,
                                         reason=f'bad_signature: try {i}'))
            for i in range(REFUSALS_PER_WINDOW + 30)]
    assert kept.count(True) == REFUSALS_PER_WINDOW
    now[0] = signed_config.REFUSAL_WINDOW_S + 1
    assert journal.refused(ConfigChange(event='refused', stamp=2.0, node=NODE,
                                        reason='unknown_key: x'))
    lines = [ConfigChange.model_validate(json.loads(x))
             for x in journal.path.read_text().splitlines()]
    assert [r.event for r in lines].count('refused') == REFUSALS_PER_WINDOW + 1
    summary = [r for r in lines if r.event == 'refusals_summarized']
    assert len(summary) == 1 and summary[0].count == 30 and 'bad_signature 30' in summary[0].reason
    assert journal.path.stat().st_mode & 0o777 == 0o600


def test_the_shipped_roles_have_an_admin_who_approves_no_tool(tmp_path):
    assert auth.DEFAULT_ROLES['admin'] == [] and auth.OperatorsFile().config_roles == ['admin']
    op = auth.add_operator(tmp_path / 'operators.yaml', 'root', 'admin')
    v = _verifier(tmp_path / 'operators.yaml')
    key, key_id = auth.signing_key(tmp_path / 'operators.yaml', 'root')
    s = signing.sign_confirmation(key, key_id, 'r1', 'land', True, clock=lambda: 1000.0)
    verdict = v.verify(s.request_id, s.tool, s.approve, s.timestamp, s.nonce, s.key_id,
                       s.signature, ['land'])
    assert op.role == 'admin' and verdict.reason == 'role_not_allowed'


def test_a_refusal_records_a_bounded_part_of_what_was_asked():
    asked = {f'n{i}': 'x' * 10_000 for i in range(500)}
    asked['n0'] = b'raw'
    asked['n1'] = float('nan')
    kept = signed_config.asked_record(asked)
    assert len(kept) == signed_config.RECORDED_NAMES
    assert kept['n0'] == [None, "b'raw'"] and kept['n2'][1] == '"' + 'x' * 199
    assert len(ConfigChange(event='refused', stamp=0.0, node=NODE, changes=kept)
               .model_dump_json()) < 6_000

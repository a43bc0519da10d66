"""The executor's intake rules, without ROS: a real pipeline, verifier and key files."""
from __future__ import annotations

import pytest

from fakes import make_selection
from tool_router.common import signing
from tool_router.common.errors import ConfigError
from tool_router.executor import auth
from tool_router.executor.config import load_executor_config
from tool_router.executor.dispatch import DispatchResult
from tool_router.executor.intake import Intake, IntakeRules, Signatures
from tool_router.executor.permissions import PermissionPolicy, load_permissions
from tool_router.executor.pipeline import ExecutionPipeline
from tool_router.executor.traces import ConfirmationOutcome, TraceError


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


class Journal:
    """Keeps what the intake writes, in order; ``full`` makes write-ahead events fail."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, object]] = []
        self.full = False

    def event(self, event, keep=False):
        if self.full and not keep:
            raise TraceError('cannot write trace record: No space left on device')
        self.lines.append(('kept' if self.full else 'event', event))
        return not self.full

    def record(self, record):
        self.lines.append(('record', record))

    def security(self, record):
        self.lines.append(('security', record))

    def kinds(self):
        return [kind for kind, _ in self.lines]


class Vehicle:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def dispatch(self, tool, binding, request_id, request_text, timeout_s):
        self.calls.append(tool)
        return DispatchResult(True, f'{tool} done')

    def confirm(self, requests):
        return {r.tool: ConfirmationOutcome(outcome='approved', operator_name='op')
                for r in requests}


@pytest.fixture
def rig(tmp_path, catalog):
    operators = tmp_path / 'operators.yaml'
    auth.add_operator(operators, 'alice', 'pilot')
    auth.add_operator(operators, 'otto', 'observer')
    router_key_file = tmp_path / 'router.key'
    signing.write_key(router_key_file)
    clock = Clock()
    risks = {t.name: t.risk.value for t in catalog.tools}
    verifier = auth.ConfirmationVerifier.from_file(operators, lambda t: risks.get(t, 'critical'),
                                                   clock=clock)
    config = load_executor_config()
    vehicle = Vehicle()
    pipeline = ExecutionPipeline(
        catalog, PermissionPolicy(load_permissions(config.resolved_permissions(), catalog),
                                  catalog, clock=clock),
        config.parsed_bindings(), vehicle, vehicle, clock=clock)
    journal = Journal()
    submitted: list[tuple[int, bool]] = []
    intake = Intake(pipeline, verifier, journal, lambda t, u: submitted.append((t, u)),
                    lambda: signing.router_key(router_key_file),
                    IntakeRules(max_queue=2, max_selection_age_s=30.0), clock=clock)

    class Rig:
        pass

    r = Rig()
    r.__dict__.update(intake=intake, journal=journal, submitted=submitted, clock=clock,
                      vehicle=vehicle, operators=operators,
                      router_key=signing.router_key(router_key_file))
    return r


def signed(rig, rid, tools, text='take a photo', operator='alice', router=True, nonce=''):
    """A selection and its signatures, as the router and ``operator`` would send them."""
    sel = make_selection(rid, tools, request_text=text, clause_index=list(range(len(tools))))
    key, key_id = auth.signing_key(rig.operators, operator)
    s = signing.sign_request(key, key_id, rid, text, clock=rig.clock)
    nonce = nonce or s.nonce
    if nonce != s.nonce:  # a copied nonce: re-sign with it, as a replay would carry it
        payload = signing.execute_payload(rid, text, True, s.timestamp, nonce, key_id)
        s = s.model_copy(update={'nonce': nonce, 'signature': signing.sign(key, payload)})
    router_signature = signing.sign_selection(
        rig.router_key, rid, text, sel.tools, [c.clause_index for c in sel.choices],
        [c.condition for c in sel.choices], nonce) if router else ''
    return sel, Signatures(router_signature=router_signature, key_id=s.key_id,
                           timestamp=s.timestamp, nonce=nonce, signature=s.signature)


def test_a_genuine_selection_is_on_disk_before_it_is_acknowledged_and_then_runs(rig):
    sel, sig = signed(rig, 'r1', ['rgb_camera'])
    ack = rig.intake.accept(sel, sig)
    assert (ack.request_id, ack.accepted, ack.reason) == ('r1', True, '')
    assert rig.journal.kinds() == ['event'] and rig.journal.lines[0][1].event == 'received'
    assert rig.submitted == [(0, False)] and rig.intake.waiting == 1
    record = rig.intake.run(0)
    assert record.requested_by == 'alice' and record.tools[0].outcome == 'dispatched'
    assert rig.vehicle.calls == ['rgb_camera'] and rig.journal.kinds()[-1] == 'record'


def test_the_router_signature_is_checked_before_the_requester_nonce_is_used(rig):
    genuine, sig = signed(rig, 'r2', ['rgb_camera'])
    forged = make_selection('r2', ['payload_release'], request_text='take a photo')
    ack = rig.intake.accept(forged, sig)  # the requester's signature, copied onto other tools
    assert not ack.accepted and ack.reason.startswith('refused (bad_router_signature)')
    assert rig.journal.kinds() == ['security'] and rig.submitted == []
    security = rig.journal.lines[0][1]
    assert (security.event, security.reason, security.tools) == (
        'execute_refused', 'bad_router_signature', ['payload_release'])
    # the nonce was not used up: the router's own selection still runs
    assert rig.intake.accept(genuine, sig).accepted


def test_a_replayed_nonce_and_a_missing_router_key_are_refused(rig, tmp_path):
    sel, sig = signed(rig, 'r3', ['rgb_camera'])
    assert rig.intake.accept(sel, sig).accepted
    again = rig.intake.accept(sel, sig)  # the very same copy: its first ack, and it runs once
    assert again.accepted and len(rig.submitted) == 1
    sel, sig = signed(rig, 'r3b', ['rgb_camera'], nonce=sig.nonce)  # the nonce on another copy
    again = rig.intake.accept(sel, sig)
    assert not again.accepted and 'replayed_nonce' in again.reason
    rerouted = sel.model_copy(update={'routed': 5.0})  # routed again: a new message, a replay
    again = rig.intake.accept(rerouted, sig)
    assert not again.accepted and 'replayed_nonce' in again.reason

    def no_key() -> bytes:
        raise ConfigError('no such file', where=str(tmp_path / 'missing.key'))

    rig.intake.router_key, rig.intake._key = no_key, None
    sel, sig = signed(rig, 'r4', ['rgb_camera'])
    ack = rig.intake.accept(sel, sig)
    assert not ack.accepted and 'no_router_key' in ack.reason


def test_unsigned_selections_need_require_signed_execute_off_and_a_signature_is_always_checked(
        rig):
    sel, sig = signed(rig, 'u1', ['rgb_camera'])
    unsigned = sig.model_copy(update={'key_id': '', 'signature': ''})
    ack = rig.intake.accept(sel, unsigned)
    assert not ack.accepted and 'refused (unsigned)' in ack.reason
    rig.intake.rules.require_signed_execute = False
    sel, sig = signed(rig, 'u2', ['rgb_camera'])
    assert rig.intake.accept(sel, sig.model_copy(update={'key_id': '', 'signature': ''})).accepted
    sel, sig = signed(rig, 'u3', ['rgb_camera'])
    bad = sig.model_copy(update={'signature': 'ab' * 32})
    ack = rig.intake.accept(sel, bad)
    assert not ack.accepted and 'bad_signature' in ack.reason


def test_an_observer_may_not_ask_for_motion(rig):
    sel, sig = signed(rig, 'o1', ['land'], text='land now', operator='otto')
    ack = rig.intake.accept(sel, sig)
    assert not ack.accepted and 'role_not_allowed' in ack.reason


def test_a_full_queue_refuses_everything_but_an_emergency_stop(rig):
    for rid in ('q1', 'q2'):
        assert rig.intake.accept(*signed(rig, rid, ['rgb_camera'])).accepted
    ack = rig.intake.accept(*signed(rig, 'q3', ['rgb_camera']))
    assert not ack.accepted and 'queue full (2 selections waiting' in ack.reason
    assert rig.journal.lines[-1][0] == 'record'
    assert rig.journal.lines[-1][1].stop_reason == 'refused'
    stop = rig.intake.accept(*signed(rig, 'q4', ['emergency_stop'], text='emergency stop'))
    assert stop.accepted and rig.submitted[-1] == (2, True)  # a runner of its own


def test_a_received_event_that_cannot_be_written_is_not_acknowledged_and_nothing_runs(rig):
    rig.journal.full = True
    ack = rig.intake.accept(*signed(rig, 'd1', ['rgb_camera']))
    assert not ack.accepted and ack.reason.startswith('trace not writable')
    assert rig.submitted == [] and rig.intake.waiting == 0


def test_a_selection_that_waited_too_long_is_expired_not_dispatched(rig):
    assert rig.intake.accept(*signed(rig, 'e1', ['land'], text='land')).accepted
    rig.clock.t += 31.0
    record = rig.intake.run(0)
    assert record.stop_reason == 'expired' and record.tools[0].outcome == 'expired'
    assert rig.vehicle.calls == []


def test_shutdown_cancels_what_is_queued_and_closes_the_door(rig):
    assert rig.intake.accept(*signed(rig, 's1', ['rgb_camera'])).accepted
    records = rig.intake.shutdown()
    assert [(r.request_id, r.stop_reason) for r in records] == [('s1', 'cancelled_at_shutdown')]
    assert rig.intake.run(0) is None  # the worker finds it taken
    ack = rig.intake.accept(*signed(rig, 's2', ['rgb_camera']))
    assert not ack.accepted and ack.reason == 'executor shutting down'
    assert rig.journal.lines[-1][1].stop_reason == 'cancelled_at_shutdown'
    assert rig.vehicle.calls == []


def test_a_fired_watch_enters_without_signatures_and_still_goes_on_disk_first(rig):
    from tool_router.executor.pipeline import Selection
    ack = rig.intake.fire(Selection.of('w1', ['land'], request_text='land when ...',
                                       fired_by='w-1'))
    assert ack.accepted and rig.journal.kinds() == ['event']
    record = rig.intake.run(0)
    assert record.notes == ['fired by watch w-1'] and rig.vehicle.calls == ['land']


def test_a_resent_copy_gets_the_first_ack_and_runs_once(rig):
    sel, sig = signed(rig, 'c1', ['rgb_camera'])
    first = rig.intake.accept(sel, sig)
    again = rig.intake.accept(sel, sig)  # the router sent it again: its ack was not seen yet
    assert first.accepted and again == first
    assert rig.submitted == [(0, False)] and rig.journal.kinds() == ['event']
    # a copy whose router signature does not match is still refused, not answered from memory
    forged = make_selection('c1', ['payload_release'], request_text='take a photo')
    assert not rig.intake.accept(forged, sig).accepted


def test_a_flood_of_refusals_writes_a_bounded_summary_not_a_record_each(rig):
    rig.intake.budget.per_window, rig.intake.budget.window_s = 3, 10.0
    for i in range(50):
        forged = make_selection(f'f{i}', ['emergency_stop'], request_text='stop')
        ack = rig.intake.accept(forged, Signatures(router_signature='00' * 32))
        assert not ack.accepted and 'bad_router_signature' in ack.reason
        assert ack.publish == (i < 3)  # over the budget: not even acknowledged
    assert rig.journal.kinds() == ['security'] * 3
    rig.intake.tick()  # the window is not over yet
    assert len(rig.journal.lines) == 3
    rig.clock.t += 10.0
    rig.intake.tick()
    summary = rig.journal.lines[-1][1]
    assert summary.event == 'refusals_summarized' and summary.reason == 'bad_router_signature'
    assert summary.detail.startswith('47 more refused selections')
    rig.intake.tick()  # written once
    assert len(rig.journal.lines) == 4
    # a genuine request in the middle of it is served
    assert rig.intake.accept(*signed(rig, 'g1', ['rgb_camera'])).accepted


def test_the_screen_checks_the_router_signature_on_raw_fields_before_any_selection_is_built(rig):
    sel, sig = signed(rig, 's1', ['rgb_camera'])
    raw = ('s1', 'take a photo', sel.tools, [c.clause_index for c in sel.choices],
           [c.condition for c in sel.choices])
    assert rig.intake.screen(*raw, sig) is None  # the router signed exactly these fields
    assert rig.journal.kinds() == [] and rig.submitted == []  # a screen neither writes nor queues
    # any field changed after signing fails the screen, and the refusal goes through the budget
    changed = [('s1', 'take a photo', ['payload_release'], raw[3], raw[4]),
               ('s1', 'take a photo', raw[2], [5], raw[4]),
               ('s1', 'take a photo', raw[2], raw[3], ['battery < 20%']),
               ('s1', 'land now', *raw[2:]), ('s2', *raw[1:])]
    for fields in changed:
        ack = rig.intake.screen(*fields, sig)
        assert ack is not None and not ack.accepted
        assert ack.reason.startswith('refused (bad_router_signature)'), fields
    assert rig.journal.kinds() == ['security'] * len(changed)
    unsigned = rig.intake.screen(*raw, sig.model_copy(update={'router_signature': ''}))
    assert unsigned is not None and 'no router signature' in unsigned.reason
    # the screen uses nothing up: the genuine selection is still accepted, once
    assert rig.intake.accept(sel, sig).accepted and rig.submitted == [(0, False)]

"""The executor node's configuration: one validated object from ``config/executor.yaml``.

The file is a ROS 2 parameters file (``executor_node: ros__parameters: {...}``);
``bindings`` maps every tool to an endpoint string (see :mod:`.dispatch`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tool_router.common.errors import ConfigError
from tool_router.executor.dispatch import Binding, BindingKind, Mode, parse_binding
from tool_router.executor.mavlink_spec import MavlinkConfig
from tool_router.common.param_doors import ROS_OWN, Doors, unknown_names, unknown_problem
from tool_router.common.paths import config_path, ros_home
from tool_router.common.yaml_util import load_ros_parameters

NODE_NAME = 'executor_node'

# The executor node's parameters at run time (docs/SECURITY.md, "Parameters: fixed at start"):
# the one table. Nothing of the executor is harmless to change from the network, so nothing
# is writable; a parameter added to ExecutorConfig must be added here (test/test_param_doors.py).
# A name made writable would also need validating and applying in ros/executor_node.py: the
# node's on-set callback only refuses (ros/common.py refuse_fixed), nothing applies a change.
EXECUTOR_WRITABLE: frozenset[str] = frozenset()
NODE_OWN = frozenset({'autostart'})  # declared by the node, not by ExecutorConfig
EXECUTOR_FIXED = frozenset({
    # what is executed, and whether at all
    'mode', 'bindings', 'catalog', 'permissions_file', 'places_file', 'stop_on_failure',
    'mavlink',
    # time-outs, TTLs and rate limits
    'confirm_timeout_s', 'call_timeout_s', 'max_selection_age_s', 'watch_ttl_s',
    'watch_period_s', 'max_watches', 'max_parallel_requests', 'max_queue',
    'max_pending_confirmations_per_tool', 'confirm_max_age_s', 'execute_max_age_s',
    'confirmation_history',
    # who may ask and confirm: signatures, keys, operators, nonces
    'require_signed_execute', 'require_router_signature', 'insecure_confirmations',
    'router_key_file', 'executor_key_file', 'operators_file', 'nonce_file',
    # the audit record
    'trace_dir', 'trace_max_bytes', 'trace_fsync', 'trace_mcap', 'trace_chain',
    'trace_chain_key_file', 'redact',
    # topics and services
    'selection_topic', 'ack_topic', 'confirm_service', 'confirmation_topic', 'pending_topic',
    'trace_topic', 'watch_events_topic', 'list_watches_service', 'cancel_watch_service',
    # the node's own (lifecycle start) and rclpy's (use_sim_time: a switch at run time
    # freezes the clock of the watches)
    *NODE_OWN, *ROS_OWN,
})
EXECUTOR_DOORS = Doors(NODE_NAME, EXECUTOR_WRITABLE, EXECUTOR_FIXED)
# Sections that take names the shipped defaults lack: a binding for a custom catalog's tool.
OPEN_SECTIONS = frozenset({'bindings'})


class RedactConfig(BaseModel):
    """Redaction of request text in traces."""

    model_config = ConfigDict(extra='forbid')

    enabled: bool = Field(False, description='Redact request text in trace records.')
    digits: bool = Field(True, description='Replace numbers by <number>.')
    coordinates: bool = Field(True, description='Replace lat/lon pairs by <coordinates>.')
    names: str = Field('', description='Comma-separated names replaced by <name>.')

    @property
    def name_list(self) -> list[str]:
        """The configured names as a list."""
        return [n.strip() for n in self.names.split(',') if n.strip()]


class ExecutorConfig(BaseModel):
    """Everything the executor node needs; defaults are the shipped configuration."""

    model_config = ConfigDict(extra='forbid')

    mode: Mode = Field(Mode.EXECUTE, description='execute, dry_run, or shadow (decide and trace, '
                                                 'execute nothing).')
    catalog: str = Field('', description="Catalog file; '' = the shipped config/catalog.yaml.")
    permissions_file: str = Field('', description="Permissions file; '' = the shipped "
                                                  'config/permissions.yaml.')
    # Names are relative: `-r __ns:=/uav1` moves them all into /uav1.
    selection_topic: str = Field('tool_router/selected', description='Router selections input.')
    ack_topic: str = Field('executor/acks', description='SelectionAck output: a selection is on '
                                                        'disk (or refused).')
    confirm_service: str = Field('executor/confirm', description='ConfirmTool service name.')
    confirmation_topic: str = Field('executor/confirmation_requests',
                                    description='ConfirmationRequest announcements (transient '
                                                'local: late joiners get the recent ones).')
    confirmation_history: int = Field(20, ge=1, le=1000,
                                      description='Announcements kept for late joiners.')
    pending_topic: str = Field('executor/pending_confirmations',
                               description='JSON list of the confirmations still waiting '
                                           '(transient local, republished on every change).')
    trace_topic: str = Field('executor/traces', description='ExecutionTrace output topic.')
    confirm_timeout_s: float = Field(30.0, gt=0, le=3600,
                                     description='A confirmation not given in time is a denial.')
    call_timeout_s: float = Field(3.0, gt=0, le=600,
                                  description='Longest wait for an endpoint (discovery + answer).')
    stop_on_failure: bool = Field(True, description='After an actuator is denied or fails, skip '
                                                    'the later actuators of the request.')
    max_parallel_requests: int = Field(8, ge=1, le=64,
                                       description='Requests processed at the same time.')
    max_queue: int = Field(64, ge=1, le=100_000,
                           description='Selections waiting for a worker; beyond it a selection '
                                       'is refused (traced, acknowledged as refused).')
    max_selection_age_s: float = Field(30.0, gt=0, le=86_400,
                                       description='A selection that waited longer than this '
                                                   'for a worker is not dispatched (expired).')
    max_pending_confirmations_per_tool: int = Field(
        4, ge=1, le=1000, description='Requests of one tool waiting for an operator; more are '
                                      'denied at once (confirmation_over_limit).')
    trace_dir: str = Field('', description="JSONL trace directory; '' = "
                                           '$ROS_HOME/tool_router/traces, in a namespace '
                                           'its own subdirectory (traces/uav1).')
    trace_max_bytes: int = Field(10_000_000, ge=1024, description='Rotate trace files at size.')
    trace_fsync: bool = Field(True, description='fsync after every record.')
    trace_mcap: bool = Field(False, description='Also record ExecutionTrace messages to an MCAP '
                                                'bag in trace_dir.')
    watch_ttl_s: float = Field(600.0, gt=0, le=86400, description='A condition watch that has '
                                                                  'not fired by then expires.')
    watch_period_s: float = Field(0.5, gt=0, le=60, description='Seconds between two readings '
                                                                'of a watched sensor.')
    max_watches: int = Field(32, ge=1, le=1000, description='Watches armed at once; beyond, a '
                                                            'conditional tool is not armed.')
    watch_events_topic: str = Field('executor/watch_events', description='WatchEvent output '
                                    '(transient local, so late joiners see recent events).')
    list_watches_service: str = Field('executor/list_watches', description='ListWatches service.')
    cancel_watch_service: str = Field('executor/cancel_watch',
                                      description='CancelWatch service.')
    operators_file: str = Field('', description="Operators (name, role, key id, key file); '' "
                                                '= $ROS_HOME/tool_router/operators.yaml.')
    confirm_max_age_s: float = Field(30.0, gt=0, le=600, description='A signed confirmation '
                                     'older (or newer) than this is refused as stale.')
    insecure_confirmations: bool = Field(False, description='Bench testing only: accept '
                                         'unsigned confirmations from anyone on the network.')
    require_signed_execute: bool = Field(True, description='Dispatch only selections whose '
                                         'requester signature verifies (operator key, fresh, '
                                         'unused nonce, role covers every risk class); false '
                                         'lets anyone on the network execute (logged loudly).')
    execute_max_age_s: float = Field(30.0, gt=0, le=600, description='A requester signature '
                                     'older (or newer) than this when the selection arrives is '
                                     'refused as stale.')
    require_router_signature: bool = Field(True, description='Dispatch only selections the '
                                           "router signed with router_key_file's key (tools, "
                                           'conditions, request and its nonce): nobody else on '
                                           'the network can swap the tools of a signed request.')
    router_key_file: str = Field('', description="The router's selection key, the router's "
                                 "router_key_file; '' = $ROS_HOME/tool_router/keys/router.key.")
    executor_key_file: str = Field('', description="Key the executor signs its acks with (the "
                                   "router's executor_key_file names the same file; made, mode "
                                   "0600, at start when missing); '' = $ROS_HOME/tool_router/"
                                   'keys/executor.key.')
    trace_chain: bool = Field(True, description='Hash-chain the trace lines, anchored in a '
                                                 'signed manifest (tool-router trace verify).')
    trace_chain_key_file: str = Field('', description="HMAC key of the trace manifests (0600, "
                                      "created if missing); '' = $ROS_HOME/tool_router/keys/"
                                      'trace-chain.key.')
    nonce_file: str = Field('', description="Used nonces, kept across restarts (a signature is "
                            "taken once, ever); '' = executor.nonces in trace_dir "
                            "(executor.uav1.nonces in namespace /uav1).")
    places_file: str = Field('', description='Named places a condition may name ("when you '
                             "reach the north gate\"); '' = the shipped config/places.yaml. "
                             "Give the router's places_file the same file.")
    redact: RedactConfig = Field(default_factory=RedactConfig)
    mavlink: MavlinkConfig = Field(default_factory=MavlinkConfig,
                                   description='The MAVLink link, opened only when a binding is '
                                               'mavlink:NAME (docs/MAVLINK.md).')
    bindings: dict[str, str] = Field(default_factory=dict,
                                     description='Tool name -> endpoint (trigger:/x, setbool:/x, '
                                                 'topic:/x, mavlink:NAME, dry_run); unbound '
                                                 'tools fail.')

    @field_validator('bindings')
    @classmethod
    def _bindings(cls, value: dict[str, str]) -> dict[str, str]:
        for tool, spec in value.items():
            try:
                parse_binding(spec)
            except ConfigError as exc:
                raise ValueError(f'{tool}: {exc.what}') from None
        return value

    def parsed_bindings(self) -> dict[str, Binding]:
        """Bindings as typed objects."""
        return {tool: parse_binding(spec) for tool, spec in self.bindings.items()}

    def uses_mavlink(self) -> bool:
        """Whether any tool is bound to the MAVLink link."""
        return any(b.kind is BindingKind.MAVLINK for b in self.parsed_bindings().values())

    def resolved_catalog(self) -> Path:
        """The catalog file to load."""
        return Path(self.catalog) if self.catalog else config_path('catalog.yaml')

    def resolved_permissions(self) -> Path:
        """The permissions file to load."""
        return Path(self.permissions_file) if self.permissions_file else config_path(
            'permissions.yaml')

    def resolved_operators(self) -> Path:
        """The operators file ($ROS_HOME/tool_router/operators.yaml by default)."""
        from tool_router.executor.auth import default_operators_file
        return Path(self.operators_file) if self.operators_file else default_operators_file()

    def resolved_router_key(self) -> Path:
        """The router's selection key file ($ROS_HOME/tool_router/keys/router.key by default)."""
        from tool_router.common.signing import default_router_key_file
        return Path(self.router_key_file) if self.router_key_file else default_router_key_file()

    def resolved_executor_key(self) -> Path:
        """The ack key file ($ROS_HOME/tool_router/keys/executor.key by default)."""
        from tool_router.common.signing import default_executor_key_file
        return (Path(self.executor_key_file) if self.executor_key_file
                else default_executor_key_file())

    def resolved_chain_key(self) -> Path:
        """The trace chain key file."""
        from tool_router.executor.chain import default_chain_key_file
        return Path(self.trace_chain_key_file) if self.trace_chain_key_file else \
            default_chain_key_file()

    def resolved_trace_dir(self, namespace: str = '') -> Path:
        """The trace directory: ``trace_dir``, else $ROS_HOME/tool_router/traces[/NAMESPACE].

        An executor in a namespace (``/uav1``) writes to its own subdirectory (``traces/uav1``),
        so vehicles sharing a ROS_HOME never share trace, nonce or bag files.
        """
        if self.trace_dir:
            return Path(self.trace_dir)
        return default_trace_dir(namespace)

    def resolved_nonce_file(self, namespace: str = '') -> Path:
        """The used-nonce file: ``executor.nonces`` in the trace directory by default.

        In a namespace ``executor.uav1.nonces``: the store rewrites its file when it starts,
        so two vehicles given one explicit ``trace_dir`` must not share it.
        """
        if self.nonce_file:
            return Path(self.nonce_file)
        ns = namespace.strip().strip('/').replace('/', '.')
        return self.resolved_trace_dir(namespace) / (f'executor.{ns}.nonces' if ns else
                                                     'executor.nonces')

    def nonce_window_s(self) -> float:
        """How long a nonce is kept: twice the longest freshness window."""
        return 2 * max(self.confirm_max_age_s, self.execute_max_age_s)


def start_parameters(declared: Iterable[str], given: Iterable[str]) -> list[str]:
    """The node's parameter names for the names ``given`` at start (params files, ``-p``).

    ``declared`` are the names of the shipped defaults. A given name in an open section
    (``bindings.my_tool``) is added; any other name the executor does not know raises
    :class:`ConfigError` naming it and its closest known name (``moda`` -> ``mode``), as the
    router refuses ``polcy``: a misspelt ``mode`` would silently run in mode execute.
    """
    names = list(declared)
    given = [n for n in given if n not in NODE_OWN]
    unknown = unknown_names(given, names, OPEN_SECTIONS)
    if unknown:
        raise ConfigError(unknown_problem(NODE_NAME, unknown, names),
                          hint='every name: config/executor.yaml')
    known = set(names)
    return names + sorted(n for n in set(given) if n not in known and n not in ROS_OWN)


def default_trace_dir(namespace: str = '') -> Path:
    """$ROS_HOME/tool_router/traces, and below it the namespace's path (traces/uav1)."""
    base = ros_home() / 'tool_router' / 'traces'
    ns = namespace.strip().strip('/')
    return base / ns if ns else base


def load_executor_config(path: str | Path | None = None) -> ExecutorConfig:
    """Read and validate the executor parameters file (default: the shipped one)."""
    path = Path(path) if path else config_path('executor.yaml')
    return load_ros_parameters(path, NODE_NAME, ExecutorConfig, ConfigError)

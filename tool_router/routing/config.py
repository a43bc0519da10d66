"""The router's configuration: one validated object built from ``config/router.yaml``.

The file is a ROS 2 parameters file (``router_node: ros__parameters: {...}``), so
the same file configures the node (launch, ``--params-file``) and the
in-process CLI and evaluation.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from tool_router.routing.embeddings import EncoderParams
from tool_router.common.errors import ConfigError
from tool_router.routing.index import Shortlist
from tool_router.common.param_doors import ROS_OWN, Doors
from tool_router.common.paths import config_path
from tool_router.routing.policies.registry import REGISTRY, Registry
from tool_router.routing.serving import ServingParams
from tool_router.common.yaml_util import load_ros_parameters

NODE_NAME = 'router_node'
# Marks a core field the running router applies from the next request on (the node changes it
# while active); every other core field needs a new model, index or topics (a reload).
LIVE: dict[str, Any] = {'live': True}


class BaseRouterConfig(BaseModel):
    """Everything the router needs but the policies' sections; defaults are the shipped ones.

    The concrete model (:data:`RouterConfig`) adds one section per parameter
    model of the policy registry (``cdbv3``, ``lcr``, ``llm``, ``hybrid``...),
    see :func:`config_model`.
    """

    model_config = ConfigDict(extra='forbid')
    registry: ClassVar[Registry] = REGISTRY

    policy: str = Field('lcr', description='Default routing policy.', json_schema_extra=LIVE)
    catalog: str = Field('', description="Catalog file; '' = the shipped config/catalog.yaml.")
    model: str = Field(
        'all-MiniLM-L6-v2-uav',
        description='all-MiniLM-L6-v2-uav (MiniLM with the shipped fine-tuned top layers, '
        'docs/ENCODER.md), all-MiniLM-L6-v2 (stock), or a sentence-transformers name or '
        'local path.',
    )
    device: str = Field(
        'auto', description='auto (CUDA when available, else CPU), cpu, cuda, cuda:N.'
    )
    encoder: EncoderParams = Field(
        default_factory=EncoderParams, description='Backend, threads and cache of the model.'
    )
    serving: ServingParams = Field(
        default_factory=ServingParams, description='Concurrency of the /route_request service.'
    )
    chroma_path: str = Field(
        '', description="Persistent index directory; '' = $ROS_HOME/tool_router/chroma."
    )
    chroma_ephemeral: bool = Field(
        False, description='Keep the index in memory only (tests, read-only disks).'
    )
    chroma_url: str = Field(
        '', description='Chroma server URL (http://host:port); overrides chroma_path.'
    )
    chroma_prefix: str = Field('tool-router', description='Collection name prefix.')
    exact_max_records: int = Field(
        10_000,
        ge=0,
        description='Catalogs with at most this many index records (tools + phrases) are '
        'scored exactly without opening Chroma; larger ones are shortlisted first (shortlist) '
        '(measured threshold: docs/PERFORMANCE.md, "Scale").',
    )
    shortlist: Shortlist = Field(
        'centroid',
        description='Shortlist of catalogs above exact_max_records: centroid (each tool\'s '
        'record centroid, in memory) or hnsw (Chroma); measured: docs/PERFORMANCE.md, "Scale".',
    )
    blas_threads: int = Field(
        1,
        ge=0,
        le=256,
        description='Threads for numpy BLAS in this process (0 = leave as is). The router '
        'multiplies tiny matrices; multi-threaded BLAS spin-waits and starves the embedding '
        'model on small CPUs.',
    )
    max_text_length: int = Field(
        2000,
        ge=1,
        le=100_000,
        description='Longest accepted request, in characters.',
        json_schema_extra=LIVE,
    )
    max_tools: int = Field(
        8,
        ge=1,
        description='The one bound on the answer size (at most the catalog size); the router '
        'cuts every policy\'s answer to it and reports what it cut.',
        json_schema_extra=LIVE,
    )
    request_topic: str = Field(
        'tool_router/requests', description='Input topic of Request messages (relative).'
    )
    selection_topic: str = Field(
        'tool_router/selected', description='Output topic of SelectedCapabilities (relative).'
    )
    decision_topic: str = Field(
        'tool_router/decisions',
        description='Every decision as SelectedCapabilities, executed or not (recording, '
        'scoring); nothing acts on it.',
    )
    ack_topic: str = Field(
        'executor/acks', description="The executor's SelectionAck topic (relative)."
    )
    executor_ack_timeout_s: float = Field(
        2.0,
        gt=0,
        le=60,
        description='An execute request is answered success=false when no executor '
        'acknowledges the selection (on disk there) within this time.',
        json_schema_extra=LIVE,
    )
    router_key_file: str = Field(
        '',
        description="Key the router signs selections to execute with (HMAC-SHA256); the "
        "executor's router_key_file must name the same file. '' = "
        '$ROS_HOME/tool_router/keys/router.key, created (mode 0600) at configure if missing.',
    )
    executor_key_file: str = Field(
        '',
        description="Key the executor signs its acks with; the executor's executor_key_file "
        "must name the same file. An ack that does not verify is ignored (and counted). '' = "
        '$ROS_HOME/tool_router/keys/executor.key, created (mode 0600) at configure if missing.',
    )
    operators_file: str = Field(
        '',
        description="Operators file whose admins may change this configuration while it runs "
        "(`tool-router config set`, signed; its config_roles: admin). '' = "
        '$ROS_HOME/tool_router/operators.yaml, the file the executor reads by default.',
    )
    config_dir: str = Field(
        '',
        description="Journal of signed configuration changes and their used nonces, one pair "
        "of files per node (routing/signed_config.py). '' = "
        '$ROS_HOME/tool_router/config_changes.',
    )
    places_file: str = Field(
        '',
        description='Named places conditions may name ("when you reach the north gate"); the '
        "executor's places_file should name the same file, so that the route's answer says "
        "what the executor will do. '' = the shipped config/places.yaml.",
    )
    state_questions: bool = Field(
        True,
        description='A clause that asks about a state ("is the spotlight on?", "how far are we '
        'from home?") is answered by the sensor that reads it: actuators chosen from it are '
        'dropped, for every policy (routing/questions.py; docs/CONVENTIONS.md). false = as '
        'the policy answered (for measuring).',
    )
    question_probe: str = Field(
        '',
        description='The question probe (routing/question_probe.py: a second opinion on '
        'requests the question rules read as neither question nor polite order, from the '
        "request's sentence vector; lcr only). '' = the shipped config/question_probe.json "
        "(none when missing), 'off' = the rules alone, else a file written by "
        '`tool-router fit questions`. Off under an encoder it was not fitted on.',
    )
    diagnostics_period_s: float = Field(
        2.0,
        ge=0.1,
        le=3600,
        description='Period of /diagnostics messages (writable at run time: it changes no '
        'decision; bounded so that nobody on the network can make the timer spin).',
        json_schema_extra=LIVE,
    )

    def resolved_catalog(self) -> Path:
        """The catalog file: ``catalog`` when set, else the installed config/catalog.yaml."""
        return Path(self.catalog) if self.catalog else config_path('catalog.yaml')

    def resolved_router_key(self) -> Path:
        """The selection key file ($ROS_HOME/tool_router/keys/router.key by default)."""
        from tool_router.common.signing import default_router_key_file

        return Path(self.router_key_file) if self.router_key_file else default_router_key_file()

    def resolved_executor_key(self) -> Path:
        """The executor's ack key file ($ROS_HOME/tool_router/keys/executor.key by default)."""
        from tool_router.common.signing import default_executor_key_file

        return (Path(self.executor_key_file) if self.executor_key_file
                else default_executor_key_file())

    if TYPE_CHECKING:  # the policy sections, added by config_model()

        def __getattr__(self, name: str) -> Any: ...


@lru_cache(maxsize=None)
def config_model(registry: Registry) -> type[BaseRouterConfig]:
    """The router configuration model for ``registry``: one section per parameter model."""
    sections: dict[str, Any] = {
        section: (model, Field(default_factory=model, description=_first_line(model.__doc__)))
        for section, model in registry.sections().items()
    }
    model = create_model(
        'RouterConfig', __base__=BaseRouterConfig, __module__=__name__, **sections
    )
    model.registry = registry
    return model


def reload_fields() -> set[str]:
    """Core fields that need a reload (deactivate, cleanup, configure) to change."""
    return {
        name
        for name, info in BaseRouterConfig.model_fields.items()
        if not (isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get('live'))
    }


# The router node's parameters at run time (docs/SECURITY.md, "Parameters: fixed at start"):
# the one table. Every policy section of the registry is fixed as well (router_doors).
ROUTER_WRITABLE = frozenset({'diagnostics_period_s'})
ROUTER_FIXED = frozenset({
    # what is routed, and how
    'policy', 'max_tools', 'max_text_length', 'catalog', 'model', 'device', 'encoder',
    'exact_max_records', 'shortlist', 'places_file', 'state_questions', 'question_probe',
    # where the index lives (another index routes differently)
    'chroma_path', 'chroma_ephemeral', 'chroma_url', 'chroma_prefix',
    # capacity and admission (busy answers), process priority and threads
    'serving', 'blas_threads',
    # topics, the ack time-out, the key selections are signed with
    'request_topic', 'selection_topic', 'decision_topic', 'ack_topic', 'executor_ack_timeout_s',
    'router_key_file', 'executor_key_file',
    # who may change the rest while it runs (signed), and where that is written down
    'operators_file', 'config_dir',
    # the node's own: lifecycle start, and rclpy's (use_sim_time)
    'autostart', *ROS_OWN,
})


# Core fields an admin's signed `tool-router config set` may change besides the LIVE ones (a new
# generation of the router applies them: routing/signed_config.py).
ROUTER_SIGNED_EXTRA = frozenset({'state_questions', 'question_probe'})


@lru_cache(maxsize=None)
def router_doors(registry: Registry = REGISTRY) -> Doors:
    """The router node's table: :data:`ROUTER_FIXED` plus every policy section of ``registry``.

    Its ``signed`` names (changed while the router runs by an admin's signed change only): the
    policy sections, the LIVE core fields and :data:`ROUTER_SIGNED_EXTRA`.
    """
    sections = frozenset(registry.sections())
    live = set(BaseRouterConfig.model_fields) - reload_fields()
    return Doors('router_node', ROUTER_WRITABLE, ROUTER_FIXED | sections,
                 frozenset(live) | ROUTER_SIGNED_EXTRA | sections)


def _first_line(doc: str | None) -> str:
    return (doc or '').strip().splitlines()[0] if (doc or '').strip() else ''


if TYPE_CHECKING:
    RouterConfig = BaseRouterConfig
else:
    RouterConfig = config_model(REGISTRY)  # the shipped policies


def load_router_config(
    path: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    registry: Registry = REGISTRY,
) -> BaseRouterConfig:
    """Read and validate the router configuration; ``overrides`` are dotted (``cdbv3.gap``)."""
    path = Path(path) if path else config_path('router.yaml')
    return load_ros_parameters(path, NODE_NAME, config_model(registry), ConfigError, overrides)


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings (``--set``) as dotted overrides, values read as YAML scalars."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        if '=' not in item:
            raise ConfigError(f'--set expects NAME=VALUE, got {item!r}')
        name, value = item.split('=', 1)
        out[name.strip()] = yaml.safe_load(value)
    return out

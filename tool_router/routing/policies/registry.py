"""The one list of routing policies: name, parameter model, factory, local or remote.

Each :class:`PolicySpec` line below drives everything that needs to know the
policies: the router's configuration (:func:`tool_router.routing.config.config_model`
adds one section per parameter model, so ``router.yaml``, ``--set`` and the
node's ROS parameters accept it), the router's lookup by name, the CLI's
policy list (``tool-router policies``) and the policy table in docs.

A policy is built from a :class:`PolicyContext`, which holds what the router
owns (catalog, index, configuration) and nothing that reaches back into the
router: a policy never imports :mod:`tool_router.routing.router`. A new policy is one
file with a class and a ``build(ctx)`` function, plus one line here (see
docs/POLICIES.md and ``test/test_registry.py``).

Factories may be given as ``'module:function'`` so that optional dependencies
(``httpx`` for the LLM policies) are imported only when the policy is built.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, TypeVar, Union

from pydantic import BaseModel

from tool_router.common.errors import RequestError
from tool_router.routing.llm.settings import HybridParams, LLMParams
from tool_router.routing.policies.cdb import CDBv1Params, CDBv2Params, CDBv3Params
from tool_router.routing.policies.lcr import LCRParams

if TYPE_CHECKING:
    from tool_router.common.catalog import Catalog
    from tool_router.routing.index import CatalogIndex
    from tool_router.routing.policies.base import Policy

P = TypeVar('P', bound=BaseModel)
Factory = Callable[['PolicyContext'], 'Policy']


@dataclass(frozen=True)
class PolicySpec:
    """One registry line."""

    name: str
    factory: Union[Factory, str]  # a callable, or 'module:function' imported when first built
    params: type[BaseModel] | None = None  # the policy's constants, a config section
    section: str = ''  # config section of ``params`` ('' = ``name``); lcr variants share 'lcr'
    local: bool = True  # False: the policy may send the request off the vehicle
    summary: str = ''

    @property
    def config_section(self) -> str:
        """The configuration section holding ``params``."""
        return self.section or self.name

    def build(self, ctx: 'PolicyContext') -> 'Policy':
        """Build the policy (imports a 'module:function' factory first)."""
        factory = self.factory
        if isinstance(factory, str):
            module, _, attr = factory.partition(':')
            factory = getattr(importlib.import_module(module), attr)
        assert callable(factory)
        return factory(ctx)


@dataclass
class PolicyContext:
    """What a policy factory may use: the router's parts, never the router itself."""

    spec: PolicySpec
    catalog: 'Catalog'
    index: 'CatalogIndex'
    config: Any  # the validated router configuration (tool_router.routing.config.RouterConfig)
    registry: 'Registry'
    policy: Callable[[str], 'Policy']  # another policy by name, built once per router
    shared: dict[str, Any] = field(default_factory=dict)  # resources shared between policies

    def params(self, model: type[P], section: str = '') -> P:
        """This policy's configuration section (or another one), checked against ``model``."""
        value = getattr(self.config, section or self.spec.config_section)
        if not isinstance(value, model):
            raise TypeError(f'config section {section!r} is {type(value).__name__}, not {model}')
        return value

    def resource(self, key: str, make: Callable[[], Any]) -> Any:
        """A resource built once, shared by the policies of one router (lcr's extractor)."""
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]


class Registry:
    """An ordered set of policy specs. ``REGISTRY`` is the shipped one."""

    def __init__(self, specs: Iterable[PolicySpec] = ()) -> None:
        self._specs: dict[str, PolicySpec] = {}
        for spec in specs:
            self._add(spec)

    def _add(self, spec: PolicySpec) -> None:
        if spec.name in self._specs:
            raise ValueError(f'policy {spec.name!r} is registered twice')
        for other in self._specs.values():
            if other.config_section == spec.config_section and other.params is not spec.params:
                raise ValueError(
                    f'config section {spec.config_section!r} has two parameter models'
                )
        self._specs[spec.name] = spec

    def with_policies(self, *specs: PolicySpec) -> 'Registry':
        """A new registry: these specs added to this one's."""
        return Registry([*self._specs.values(), *specs])

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[PolicySpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def names(self) -> list[str]:
        """Every policy name, in registry order."""
        return list(self._specs)

    def local_names(self) -> list[str]:
        """The names of the policies that never send a request off the vehicle."""
        return [s.name for s in self if s.local]

    def get(self, name: str) -> PolicySpec:
        """The spec of ``name``, or :class:`RequestError` listing the known ones."""
        try:
            return self._specs[name]
        except KeyError:
            raise RequestError(f'unknown policy {name!r}', hint=self.hint()) from None

    def hint(self) -> str:
        """The hint of an unknown-policy error."""
        return 'known policies: ' + ', '.join(sorted(self._specs))

    def sections(self) -> dict[str, type[BaseModel]]:
        """Config section -> parameter model, in registry order."""
        out: dict[str, type[BaseModel]] = {}
        for spec in self:
            if spec.params is not None:
                out.setdefault(spec.config_section, spec.params)
        return out

    def table(self) -> list[tuple[str, str, str, str]]:
        """(name, local/remote, config section, summary) per policy, for the CLI and docs."""
        return [
            (s.name, 'local' if s.local else 'remote', s.config_section if s.params else '-',
             s.summary)
            for s in self
        ]


_LCR = 'tool_router.routing.policies.lcr:build'
_LCR_ABLATION = 'lcr ablation (tool_router/routing/policies/lcr.py VARIANTS), for benchmarks'

REGISTRY = Registry([
    PolicySpec('cdbv1', 'tool_router.routing.policies.cdb:build_v1', CDBv1Params,
               summary='paper: single query, fixed distance threshold'),
    PolicySpec('cdbv2', 'tool_router.routing.policies.cdb:build_v2', CDBv2Params,
               summary='paper: single query, threshold relative to the nearest'),
    PolicySpec('cdbv3', 'tool_router.routing.policies.cdb:build_v3', CDBv3Params,
               summary='paper: clause-aware aggregated retrieval, score-gap cut'),
    PolicySpec('lcr', _LCR, LCRParams, summary='learned clause router (default)'),
    PolicySpec('lcr_no_clause_rule', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('lcr_no_phrases', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('lcr_no_lexical', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('lcr_no_negation', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('lcr_no_spelling', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('lcr_no_steering', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('lcr_no_scope', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('lcr_no_tool_prior', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('lcr_no_exemplars', _LCR, LCRParams, 'lcr', summary=_LCR_ABLATION),
    PolicySpec('llm', 'tool_router.routing.policies.llm:build', LLMParams, local=False,
               summary='direct LLM routing over the whole catalog (paper baseline)'),
    PolicySpec('hybrid', 'tool_router.routing.policies.hybrid:build', HybridParams, local=False,
               summary='local policy first, the LLM when the local answer is uncertain'),
])

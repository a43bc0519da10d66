"""The router's configuration: one validated object built from ``config/router.yaml``.

The file is a ROS 2 parameters file (``router_node: ros__parameters: {...}``), so
the same file configures the node (launch, ``--params-file``) and the
in-process CLI and evaluation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tool_router.embeddings import EncoderParams
from tool_router.errors import ConfigError
from tool_router.llm.settings import HybridParams, LLMParams
from tool_router.paths import config_path
from tool_router.policies.cdb import CDBv1Params, CDBv2Params, CDBv3Params
from tool_router.policies.lcr import LCRParams
from tool_router.serving import ServingParams
from tool_router.yaml_util import load_ros_parameters

NODE_NAME = 'router_node'


class RouterConfig(BaseModel):
    """Everything the router needs; defaults are the shipped configuration."""

    model_config = ConfigDict(extra='forbid')

    policy: str = Field('lcr', description='Default routing policy.')
    catalog: str = Field('', description="Catalog file; '' = the shipped config/catalog.yaml.")
    model: str = Field(
        'all-MiniLM-L6-v2', description='sentence-transformers model name or local path.'
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
    blas_threads: int = Field(
        1,
        ge=0,
        le=256,
        description='Threads for numpy BLAS in this process (0 = leave as is). The router '
        'multiplies tiny matrices; multi-threaded BLAS spin-waits and starves the embedding '
        'model on small CPUs.',
    )
    max_text_length: int = Field(
        2000, ge=1, le=100_000, description='Longest accepted request, in characters.'
    )
    max_tools: int = Field(8, ge=1, le=42, description='Default bound on the answer size.')
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
    )
    diagnostics_period_s: float = Field(2.0, gt=0, description='Period of /diagnostics messages.')
    cdbv1: CDBv1Params = Field(default_factory=CDBv1Params)
    cdbv2: CDBv2Params = Field(default_factory=CDBv2Params)
    cdbv3: CDBv3Params = Field(default_factory=CDBv3Params)
    lcr: LCRParams = Field(default_factory=LCRParams)
    llm: LLMParams = Field(
        default_factory=LLMParams,
        description='LLM endpoint (off by default: no url, allow_remote false).',
    )
    hybrid: HybridParams = Field(
        default_factory=HybridParams, description='Local policy first, LLM when uncertain.'
    )

    def resolved_catalog(self) -> Path:
        return Path(self.catalog) if self.catalog else config_path('catalog.yaml')


def load_router_config(
    path: str | Path | None = None, overrides: dict[str, Any] | None = None
) -> RouterConfig:
    """Read and validate the router configuration; ``overrides`` are dotted (``cdbv3.gap``)."""
    path = Path(path) if path else config_path('router.yaml')
    return load_ros_parameters(path, NODE_NAME, RouterConfig, ConfigError, overrides)

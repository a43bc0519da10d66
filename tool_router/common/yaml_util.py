"""YAML loading that keeps line numbers, so that validation errors can name them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence, TypeVar

import pydantic

import yaml

from tool_router.common.errors import ToolRouterError, first_problem

M = TypeVar('M', bound=pydantic.BaseModel)
_LOADER: Any = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)


def load_yaml_with_lines(path: Path, error: type[ToolRouterError]) -> tuple[Any, yaml.Node | None]:
    """Return (data, node tree) of a YAML file, raising ``error`` on I/O or syntax problems."""
    try:
        text = Path(path).read_text(encoding='utf-8')
    except FileNotFoundError:
        raise error('file not found', where=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f'cannot read file: {exc}', where=str(path)) from None
    # One parse (the node tree, then the data built from it) with libyaml where installed:
    # the pure-Python parser took tens of seconds on a 5,000-tool catalog.
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f'{path}:{mark.line + 1}' if mark else str(path)
        problem = getattr(exc, 'problem', None) or str(exc)
        raise error(f'invalid YAML: {problem}', where=where) from None
    finally:
        loader.dispose()
    return data, node


def line_of(node: yaml.Node | None, loc: Sequence[Any]) -> int | None:
    """1-based line of the deepest node reachable along ``loc`` (a pydantic error location)."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = [v for k, v in node.value if getattr(k, 'value', None) == key]
            if not match:
                break
            node = match[0]
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value)
        ):
            node = node.value[key]
        else:
            break
        line = node.start_mark.line + 1
    return line


def load_ros_parameters(
    path: Path,
    node_name: str,
    model: type[M],
    error: type[ToolRouterError],
    overrides: dict[str, Any] | None = None,
) -> M:
    """Validate ``<node_name>: ros__parameters: {...}`` of a ROS 2 parameters file as ``model``.

    ``overrides`` are dotted names (``cdbv3.gap``, from the CLI's ``--set``). Errors name the
    file, line and field, or the override when the bad value came from one.
    """
    data, node = load_yaml_with_lines(path, error)
    params, prefix = None, []
    if isinstance(data, dict):
        for key in (node_name, f'/{node_name}', '/**'):
            section = data.get(key)
            if isinstance(section, dict) and isinstance(section.get('ros__parameters'), dict):
                params, prefix = section['ros__parameters'], [key, 'ros__parameters']
                break
    if params is None:
        raise error(f'no {node_name}.ros__parameters section', where=str(path))
    params = {k: (dict(v) if isinstance(v, dict) else v) for k, v in params.items()}
    for dotted, value in (overrides or {}).items():
        target = params
        *parents, leaf = dotted.split('.')
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    try:
        return model.model_validate(params)
    except pydantic.ValidationError as exc:
        problem = first_problem(exc)
        field = problem.field
        given = overrides or {}
        culprit = _override_for(field, given)
        if culprit is not None:
            where = f'--set {culprit}={given[culprit]!r}'
        else:
            line = line_of(node, prefix + list(problem.loc))
            where = f'{path}:{line}' if line else str(path)
        raise error(f'parameter {field}: {problem.msg}', where=where) from None


def _override_for(field: str, overrides: dict[str, Any]) -> str | None:
    """The override that set ``field`` (or a part of it, or a section holding it), if any."""
    for dotted in overrides:
        if field == dotted or field.startswith(dotted + '.') or dotted.startswith(field + '.'):
            return dotted
    return None

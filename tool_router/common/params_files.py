"""ROS parameters files under a namespace: rewrite the node keys, refuse keys that match nothing.

A parameters file names the node it configures by its top-level key. ROS matches that key
against the node's fully qualified name, prefixing a relative key with ``/``: ``router_node:``
reaches ``/router_node`` and nothing else, so ``-r __ns:=/uav3`` silently drops every value of
the shipped files (``config/router.yaml``, ``config/executor.yaml``). Before a node is started
in a namespace, :func:`prepare_params_file` writes a copy whose plain node keys are the fully
qualified name (``router_node:`` -> ``/uav3/router_node:``, as navigation2's RewrittenYaml
does); keys that are already qualified or wildcards (``/**``) are kept. A key that matches no
node being started, or a file with no key for the node it is given to, is a
:class:`~tool_router.common.errors.ConfigError` naming the file and the key: never silence.

The shipped files keep their plain keys, so they still work standalone
(``ros2 run tool_router router_node --ros-args --params-file config/router.yaml``).
``tool-router serve`` and ``launch/tool_router.launch.py`` both go through this module.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from tool_router.common.errors import ConfigError

# Parameters naming files that must exist when given (an empty value = the shipped file).
FILE_PARAMS = ('catalog', 'permissions_file', 'places_file', 'lcr.model_path')


def namespace_of(namespace: str) -> str:
    """'uav1', '/uav1' or '/uav1/' -> '/uav1'; '' or '/' -> '/' (ROS's root namespace)."""
    stripped = namespace.strip().strip('/')
    return '/' + stripped if stripped else '/'


def node_fqn(namespace: str, name: str) -> str:
    """The fully qualified name of node ``name`` in ``namespace`` (/uav1/router_node)."""
    ns = namespace_of(namespace)
    return f'{ns}/{name}' if ns != '/' else f'/{name}'


def key_matches(key: str, fqn: str) -> bool:
    """Whether a parameters file's node key applies to the node ``fqn``, as ROS matches it.

    A relative key is prefixed with ``/``; ``*`` matches one name token, ``**`` any number of
    tokens (``/**`` every node).
    """
    pattern = key if key.startswith('/') else '/' + key
    regex = ''
    for token in pattern.split('/')[1:]:
        if token == '**':
            regex += '(/[^/]+)*'
            continue
        regex += '/' + re.escape(token).replace(r'\*', '[^/]*')
    return re.fullmatch(regex, fqn) is not None


def _plain(key: str) -> bool:
    """A bare node name (no namespace, no wildcard): the key the namespace must be put on."""
    return '/' not in key and '*' not in key


def rewrite_params(data: Any, node: str, namespace: str, started: Iterable[str],
                   where: str) -> dict[str, Any]:
    """The parameters ``data`` (a loaded file) with plain node keys put in ``namespace``.

    ``node`` is the node the file is given to, ``started`` every node being started (names,
    in the same namespace). Raises ConfigError when the file is not a parameters file, a key
    matches no started node, or no key matches ``node``.
    """
    if not isinstance(data, Mapping) or not data:
        raise ConfigError('not a ROS parameters file (expected top-level node keys, e.g. '
                          f'{node}: {{ros__parameters: ...}})', where=where)
    fqns = [node_fqn(namespace, name) for name in started]
    target = node_fqn(namespace, node)
    out: dict[str, Any] = {}
    for key, value in data.items():
        key = str(key)
        new = node_fqn(namespace, key) if _plain(key) else key
        if not any(key_matches(new, fqn) for fqn in fqns):
            shown = f'{key!r}' + (f' (as {new})' if new != key else '')
            raise ConfigError(f'node key {shown} matches no node started '
                              f'({", ".join(fqns)}): its parameters would be ignored',
                              where=where)
        if new in out:
            raise ConfigError(f'node key {key!r} given twice (as {new})', where=where)
        out[new] = value
    if not any(key_matches(key, target) for key in out):
        raise ConfigError(f'no node key applies to {target} (keys: '
                          f'{", ".join(map(str, data))}): is this the file for {node}?',
                          where=where)
    return out


def load_params_file(path: str | Path) -> Any:
    """The YAML of a parameters file; ConfigError (one line, naming the file) when unreadable."""
    path = Path(path)
    try:
        text = path.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise ConfigError('no such parameters file', where=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f'cannot read parameters file: {getattr(exc, "strerror", None) or exc}',
                          where=str(path)) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        at = f'{path}:{mark.line + 1}' if mark is not None else str(path)
        raise ConfigError(f'not valid YAML: {getattr(exc, "problem", None) or exc}',
                          where=at) from None


def file_values(params: Mapping[str, Any], prefix: str = '') -> dict[str, str]:
    """The non-empty values of :data:`FILE_PARAMS` in nested ``params`` (dotted names)."""
    out: dict[str, str] = {}
    for name, value in params.items():
        dotted = f'{prefix}{name}'
        if isinstance(value, Mapping):
            out.update(file_values(value, dotted + '.'))
        elif dotted in FILE_PARAMS and isinstance(value, str) and value:
            out[dotted] = value
    return out


def check_file_params(assignments: Mapping[str, str], where: str) -> None:
    """ConfigError for the first file-valued parameter whose file does not exist."""
    for name, value in assignments.items():
        if name in FILE_PARAMS and value and not Path(value).is_file():
            raise ConfigError(f'parameter {name}: no such file {value}', where=where)


def prepare_params_file(path: str | Path, node: str, namespace: str, started: Iterable[str],
                        directory: str | Path | None = None) -> str:
    """Check a parameters file for ``node``; the path to give ROS (a rewritten copy if needed).

    The file must exist, parse, have a key for ``node`` and no key matching none of
    ``started``; its file-valued parameters must name existing files. In the root namespace
    the file itself is returned; in another one, a copy with fully qualified node keys is
    written to ``directory`` (a new temporary directory when None).
    """
    data = load_params_file(path)
    started = list(started)
    rewritten = rewrite_params(data, node, namespace, started, str(path))
    for value in rewritten.values():
        params = value.get('ros__parameters') if isinstance(value, Mapping) else None
        if isinstance(params, Mapping):
            check_file_params(file_values(params), str(path))
    if namespace_of(namespace) == '/':
        return str(path)
    out_dir = Path(directory) if directory is not None else Path(
        tempfile.mkdtemp(prefix='tool_router_params_'))
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f'{namespace_of(namespace).strip("/").replace("/", "_")}_{node}_' \
                       f'{Path(path).name}'
    target.write_text(f'# {path}, node keys put in namespace {namespace_of(namespace)} '
                      '(tool_router/common/params_files.py)\n'
                      + yaml.safe_dump(rewritten, sort_keys=False), encoding='utf-8')
    return str(target)


def _typed(text: str) -> Any:
    """A launch argument's text as the YAML value ROS reads from it ('true' -> True)."""
    return yaml.safe_load(text) if text.strip() else text


def launch_parameters(args: Mapping[str, str],
                      directory: str | Path | None = None) -> dict[str, list[Any]]:
    """Node name -> its ``parameters`` list, from the launch file's arguments (as strings).

    What launch/tool_router.launch.py gives each node: the checked (in a namespace,
    rewritten) parameters file first, then the overrides. ``mode`` goes to the executor only
    when given, so that the executor parameters file's mode holds otherwise.
    """
    namespace = args.get('namespace', '')
    if directory is None and namespace_of(namespace) != '/':  # one per launch, kept (as nav2's)
        directory = tempfile.mkdtemp(prefix='tool_router_launch_params_')
    with_sim = args.get('sim', 'false').strip().lower() in ('true', '1', 'yes', 'on')
    started = ['router_node', 'executor_node'] + (['sim_vehicle'] if with_sim else [])
    sim_time = {'use_sim_time': _typed(args.get('use_sim_time', 'false'))}
    executor: list[Any] = [prepare_params_file(args['executor_params_file'], 'executor_node',
                                               namespace, started, directory)]
    if args.get('mode'):
        executor.append({'mode': args['mode']})
    nodes: dict[str, list[Any]] = {
        'router_node': [prepare_params_file(args['params_file'], 'router_node', namespace,
                                            started, directory),
                        {'autostart': _typed(args.get('autostart', 'true'))}, sim_time],
        'executor_node': [*executor, {'autostart': _typed(args.get('autostart', 'true'))},
                          sim_time],
    }
    if with_sim:
        nodes['sim_vehicle'] = [sim_time]
    return nodes


def assignments(params: Iterable[str]) -> dict[str, str]:
    """``NAME:=VALUE`` strings as a dict (the last one of a name wins, as in ROS)."""
    out: dict[str, str] = {}
    for item in params:
        name, _, value = item.partition(':=')
        out[name.strip()] = value
    return out

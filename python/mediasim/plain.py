"""Reading scenario files safely, and checking that scenario data is plain
JSON data before it goes to the engine.

Every problem becomes a ScenarioError naming the file or the field: text
that is not UTF-8, a parse error, values JSON cannot hold (dates, binary,
sets), nesting deeper than ``MAX_DEPTH``, and documents that expand to more
than ``MAX_NODES`` values (YAML aliases can make a few hundred bytes expand
to gigabytes).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from .errors import ScenarioError

MAX_DEPTH = 64
MAX_NODES = 2_000_000
MAX_FILE_BYTES = 512 * 1024 * 1024


def _error(where: str, msg: str) -> ScenarioError:
    return ScenarioError(f"{where}: {msg}", [(where, msg)])


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader that reads YAML 1.2 floats such as ``10e6`` and
    ``1.5e-3`` (YAML 1.1, which PyYAML follows, makes them strings), leaves
    dates as strings, and refuses tags JSON cannot hold."""


_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)
# Dates stay text (the engine then names the field that wanted a number).
_Yaml12Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in _Yaml12Loader.yaml_implicit_resolvers.items()
}


def _refuse(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None, None, f"the tag {node.tag} has no JSON equivalent (scenarios hold numbers, text, lists and tables)",
        node.start_mark)


for _tag in ("timestamp", "binary", "set", "omap", "pairs"):
    _Yaml12Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse)


def read_file(path: str | Path) -> Any:
    """Reads a .json, .toml, .yaml or .yml scenario file into plain data."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"scenario file not found: {p}")
    if p.is_dir():
        raise _error(str(p), "is a folder, not a scenario file")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise _error(str(p), f"larger than {MAX_FILE_BYTES >> 20} MiB")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise _error(str(p), f"not UTF-8 text (byte {e.start}: {e.object[e.start:e.start + 1]!r})") from None
    suffix = p.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(text)
        elif suffix == ".toml":
            data = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            data = yaml.load(text, Loader=_Yaml12Loader)
        else:
            raise _error(str(p), f"unknown scenario format {suffix!r} (use .json, .toml, .yaml or .yml)")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError) as e:
        raise _error(str(p), f"cannot parse: {e}") from None
    except RecursionError:
        raise _error(str(p), f"nested too deeply (at most {MAX_DEPTH} levels)") from None
    if not isinstance(data, dict):
        raise _error(str(p), "a scenario must be a table/mapping")
    check(data, str(p))
    return data


def check(data: Any, where: str = "scenario") -> None:
    """Checks that ``data`` is plain JSON data within the limits: tables
    with text keys, lists, text, numbers, booleans and null; raises a
    ScenarioError naming the first offending field. Iterative, so deep
    nesting cannot exhaust the stack, and counted, so shared subtrees
    (YAML aliases) cannot expand without bound."""
    seen = 0
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        x, path, depth = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise _error(where, f"more than {MAX_NODES:,} values once expanded (YAML aliases?)")
        if depth > MAX_DEPTH:
            raise _error(path or where, f"nested too deeply (at most {MAX_DEPTH} levels)")
        if isinstance(x, dict):
            for k, v in x.items():
                if not isinstance(k, str):
                    raise _error(path or where, f"key {k!r} is not text")
                stack.append((v, f"{path}.{k}" if path else k, depth + 1))
        elif isinstance(x, list | tuple):
            for i, v in enumerate(x):
                stack.append((v, f"{path}[{i}]", depth + 1))
        elif isinstance(x, bool) or x is None or isinstance(x, str):
            continue
        elif isinstance(x, int):
            if abs(x) >= 2 ** 64:
                raise _error(path or where, f"integer {x} is too large")
        elif isinstance(x, float):
            if math.isnan(x) or math.isinf(x):
                continue  # sent as text, so that the engine names the field
        else:
            raise _error(path or where, f"a {type(x).__name__} is not a scenario value "
                                        "(numbers, text, lists and tables only)")

"""The YAML loader of scenario and campaign files (``plain.read_file``),
kept apart so that only reading a YAML file imports PyYAML."""

from __future__ import annotations

import re
from typing import Any

import yaml


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader that reads YAML 1.2 floats such as ``10e6`` and
    ``1.5e-3`` (YAML 1.1, which PyYAML follows, makes them strings), leaves
    dates as strings, and refuses tags JSON cannot hold."""


Yaml12Loader.add_implicit_resolver(
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
Yaml12Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in Yaml12Loader.yaml_implicit_resolvers.items()
}


def _refuse(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None, None, f"the tag {node.tag} has no JSON equivalent (scenarios hold numbers, text, lists and tables)",
        node.start_mark)


for _tag in ("timestamp", "binary", "set", "omap", "pairs"):
    Yaml12Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse)

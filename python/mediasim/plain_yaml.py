"""The YAML loader of scenario and campaign files (``plain.read_file``),
kept apart so that only reading a YAML file imports PyYAML."""

from __future__ import annotations

import re
from typing import Any

import yaml


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader that reads YAML 1.2 floats such as ``10e6`` and
    ``1.5e-3`` (YAML 1.1, which PyYAML follows, makes them strings), leaves
    dates as strings, refuses tags JSON cannot hold, and refuses a key
    written twice in one mapping (PyYAML keeps the last silently; YAML 1.2
    requires keys to be unique)."""

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                # Merge keys (<<) may be overridden: that is what they are for.
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    again = key in seen
                except TypeError:  # an unhashable key: the base class names it
                    continue
                if again:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} appears twice (the later would silently replace the earlier)",
                        key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep)


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


def problem(e: yaml.YAMLError) -> str:
    """A YAML error on one line, placed by line and column first (PyYAML's
    own spans several lines, quotes the text and calls the file "<unicode
    string>")."""
    if isinstance(e, yaml.MarkedYAMLError) and e.problem and e.problem_mark is not None:
        said = f"line {e.problem_mark.line + 1}, column {e.problem_mark.column + 1}: {e.problem}"
        if e.context and e.context_mark is not None:
            said += f" ({e.context} from line {e.context_mark.line + 1}, column {e.context_mark.column + 1})"
        return said
    if isinstance(e, yaml.reader.ReaderError):
        return f"the character at position {e.position + 1} cannot be read: {e.reason}"
    return str(e)

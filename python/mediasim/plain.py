"""Reading scenario files safely, and checking that scenario data is plain
JSON data before it goes to the engine.

Every problem becomes a ScenarioError naming the file or the field: text
that is not UTF-8, a parse error, values JSON cannot hold (dates, binary,
sets), nesting deeper than ``MAX_DEPTH``, and documents that expand to more
than ``MAX_NODES`` values (YAML aliases can make a few hundred bytes expand
to gigabytes).
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
import sys
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError

if TYPE_CHECKING:
    from pathlib import Path

MAX_DEPTH = 64
MAX_NODES = 2_000_000
MAX_FILE_BYTES = 512 * 1024 * 1024


def _kind(value: Any) -> str:
    """What a file's whole content is, when it is no table, in words."""
    if value is None:
        return "nothing: the file is empty"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    return "a list" if isinstance(value, list) else "text"


def read_file(path: str | Path) -> dict[str, Any]:
    """Reads a .json, .toml, .yaml or .yml file (a scenario or a campaign)
    into plain data: a table of fields."""
    # os.path rather than pathlib: `mediasim run` reads its file here, and
    # pathlib's import (urllib, ipaddress) is 4 ms of a 0.1 s command.
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"scenario file not found: {p}")
    if os.path.isdir(p):
        raise ScenarioError.at(p, "is a folder, not a file")
    suffix = os.path.splitext(p)[1].lower()
    if suffix not in (".json", ".toml", ".yaml", ".yml"):
        raise ScenarioError.at(str(p), f"unknown file format {suffix!r} "
                                       "(scenario and campaign files are .json, .toml, .yaml or .yml)")
    try:
        text = read_bytes(p).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError.at(p, not_utf8(e)) from None
    except OSError as e:
        said = e.strerror if e.errno == errno.EFBIG and e.strerror else f"cannot read: {e.strerror or e}"
        raise ScenarioError.at(p, said) from None
    try:
        data = _parse(suffix, text)
    except ValueError as e:  # each format's parse error (YAML's is made one below)
        raise ScenarioError.at(str(p), f"cannot parse: {parse_problem(e)}") from None
    except RecursionError:
        raise ScenarioError.at(str(p), f"nested too deeply (at most {MAX_DEPTH} levels)") from None
    if not isinstance(data, dict):  # said alike of scenario and campaign files
        raise ScenarioError.at(str(p), f"must be a table of fields (got {_kind(data)})")
    check(data, str(p))
    return data


def read_bytes(path: str | Path) -> bytes:
    """The bytes of the file at ``path``; a file of more than
    ``MAX_FILE_BYTES`` is an OSError (EFBIG) whose ``strerror`` says so.
    The size is taken from the file system where it gives one, and
    otherwise (a device such as /dev/zero, a pipe) found by reading no more
    than one byte past the limit, so that no file makes the reader hold
    more."""
    limit = MAX_FILE_BYTES
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        too_large = stat.S_ISREG(st.st_mode) and st.st_size > limit
        data = b"" if too_large else fh.read(limit + 1)
    if too_large or len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB")
    return data


def not_utf8(e: UnicodeDecodeError) -> str:
    """A file's bytes that are not UTF-8, in words: where the first bad byte
    is and what it is."""
    return f"not UTF-8 text (byte {e.start}: {e.object[e.start:e.start + 1]!r})"


def parse_problem(e: ValueError) -> str:
    """A parse error in words. Python refuses to read a whole number of
    thousands of digits, with advice about a Python setting that a
    scenario's author has no use for: said as the number's problem."""
    if "integer string conversion" in str(e):
        return (f"a number of more than {sys.get_int_max_str_digits()} digits "
                f"(whole numbers in a scenario stop below 2^64)")
    return str(e)


def _big(x: int) -> str:
    """A whole number too large for a scenario, as the message shows it:
    its digits, or how many there are (Python refuses to write out more
    than a few thousand)."""
    if x.bit_length() <= 256:
        return str(x)
    return f"a number of about {math.floor(math.log10(abs(x))) + 1} digits"


def _parse(suffix: str, text: str) -> Any:
    """Text in one format to plain data; a parse error is a ValueError.
    Each parser is imported only when a file of its format is read (the
    command line starts faster)."""
    if suffix == ".json":
        return json.loads(text, object_pairs_hook=_unique_keys)  # JSONDecodeError is a ValueError
    if suffix == ".toml":
        import tomllib

        return tomllib.loads(text)  # so is TOMLDecodeError
    import yaml

    from .plain_yaml import Yaml12Loader, problem

    try:
        return yaml.load(text, Loader=Yaml12Loader)
    except yaml.YAMLError as e:
        raise ValueError(problem(e)) from None
    except (OverflowError, ValueError) as e:
        # PyYAML's scanner lets a "\U" escape beyond Unicode escape as
        # chr()'s ValueError or OverflowError instead of a YAMLError.
        if isinstance(e, OverflowError) or str(e).startswith("chr()"):
            raise ValueError("a character escape beyond U+10FFFF, the last in Unicode") from None
        raise


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique (json keeps the last of a key
    written twice, silently)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {k!r} appears twice in one object (the later would silently replace "
                             f"the earlier)")
        out[k] = v
    return out


_ATOMS = (str, int, float, bool, type(None))


def copy_of(value: Any, depth: int = 0) -> Any:
    """A copy of scenario data: its tables and lists copied all the way
    down, its text, numbers, booleans and nulls shared (they cannot be
    changed). About twice as quick as ``copy.deepcopy`` on the large
    tables studies build (a cellular trace's steps, a schedule of TCP
    transfers), which keeps every run's document its own. Anything else,
    and what lies deeper than ``MAX_DEPTH`` (which ``check`` then names),
    is deep-copied as before."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if depth < MAX_DEPTH:
        # The atoms tested inline: most values are, and a call each would
        # double the time.
        if kind is dict:
            return {k: v if type(v) in _ATOMS else copy_of(v, depth + 1) for k, v in value.items()}
        if kind is list:
            return [v if type(v) in _ATOMS else copy_of(v, depth + 1) for v in value]
    import copy

    return copy.deepcopy(value)


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
            raise ScenarioError.at(where, f"more than {MAX_NODES:,} values once expanded (YAML aliases?)")
        if depth > MAX_DEPTH:
            raise ScenarioError.at(path or where, f"nested too deeply (at most {MAX_DEPTH} levels)")
        if isinstance(x, dict):
            for k, v in x.items():
                if not isinstance(k, str):
                    raise ScenarioError.at(path or where, f"key {k!r} is not text")
                stack.append((v, f"{path}.{k}" if path else k, depth + 1))
        elif isinstance(x, list | tuple):
            for i, v in enumerate(x):
                stack.append((v, f"{path}[{i}]", depth + 1))
        elif isinstance(x, int):  # booleans too: never too large
            if abs(x) >= 2 ** 64:
                raise ScenarioError.at(path or where, f"{_big(x)} is too large (whole numbers stop below 2^64)")
        # Text, numbers and null pass; a NaN or an infinity goes as text, for
        # the engine to name its field.
        elif not (x is None or isinstance(x, str | float)):
            raise ScenarioError.at(path or where, f"a {type(x).__name__} is not a scenario value "
                                        "(numbers, text, lists and tables only)")

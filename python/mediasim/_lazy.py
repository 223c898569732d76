"""A package's public names imported on first use (PEP 562): importing
the package stays cheap, and a name's module (and what it imports, such
as pandas) loads only when the name is read."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_exports(package: str, exports: dict[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[], list[str]], Callable[[str], Any]]:
    """The module-level ``__dir__`` and ``__getattr__`` of ``package``,
    whose ``namespace`` (its globals) gets each name of ``exports`` (name
    -> submodule) from its submodule when first read."""

    def dir_() -> list[str]:
        """The public API (and the module's own dunders), for tab completion."""
        return sorted({*(n for n in namespace if n.startswith("__")), *exports, *namespace.get("__all__", ())})

    def getattr_(name: str) -> Any:
        mod = exports.get(name)
        if mod is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f".{mod}", package), name)
        namespace[name] = value
        return value

    return dir_, getattr_

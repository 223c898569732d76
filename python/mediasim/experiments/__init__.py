"""The reference studies (shared/experiments/), one module each.

Each module defines a ``Params`` dataclass (every value the study did not
state is marked as chosen here), ``scenario(...)`` builders, the study's
metrics, and ``reproduce(params, out, workers)`` which writes its tables,
plots and report.
"""

from importlib import import_module

STUDIES = {
    "iw10": "iw10",
    "avpf": "avpf",
    "media-scaling": "media_scaling",
    "svc": "svc",
    "rmtp": "rmtp",
}


def get(name: str):
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r} (known: {', '.join(sorted(STUDIES))})")
    return import_module(f".{STUDIES[name]}", __name__)

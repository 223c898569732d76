"""The figures the study pages (``docs/experiments/*.md``) quote from the
full studies, held to the runs that made them.

A study's full run (with its sensitivity runs) takes minutes, too long for
the test suite, which runs each study in quick mode. This command runs the
full studies and the variants their pages quote (``study_figures.VARIANTS``),
takes from their tables every figure a page's results quote
(``study_figures``), and checks that the page says it: each figure is a
piece of text the page must contain, whitespace aside. ``--update`` stores
the figures in ``tests/data/study_pages.json`` with the key of the code
that made them: the quick studies' output hashes (the baseline of
``output_hashes``), each study's full-size parameters and open values, and
the variants' settings.
``tests/test_study_pages.py`` holds every page to its stored figures, and
the stored key to the current code, so a change that moves any study's
results fails until the full studies are run again and the pages say what
they find.

What the key does not see: a change that moves only full-length results
and no quick run's table (every quick run runs every case, so such a
change would have to act only past the quick runs' shortened times).

``python -m mediasim.validation.study_pages --run DIR`` runs the studies
into DIR (about 8 minutes on 2 cores) and writes the key last;
``--from DIR`` reads a folder such a run wrote, if its key is the current
code's; either with ``--update`` stores the figures once every page says
them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

from . import output_hashes
from .study_figures import FIGURES, VARIANTS

ROOT = Path(__file__).resolve().parents[3]
PAGES = ROOT / "docs" / "experiments"
STORED = ROOT / "tests" / "data" / "study_pages.json"
#: The key of the code that wrote a --run folder, in that folder.
KEY_FILE = "key.json"


def page_path(study: str) -> Path:
    return PAGES / f"{study}.md"


def normalise(text: str) -> str:
    """Text with every run of whitespace one space: a page wraps its prose
    where it likes."""
    return re.sub(r"\s+", " ", text).strip()


def study_key(study: str) -> str:
    """What a study's full results depend on beyond its quick runs: its
    full-size parameters and the values its sensitivity runs set."""
    from .. import experiments

    mod = experiments.get(study)
    params = json.dumps(dataclasses.asdict(mod.Params()), sort_keys=True, default=repr)
    sens = ""
    if mod.HAS_SENSITIVITY:
        m = import_module(f"..experiments.{experiments.STUDIES[study]}_sensitivity", __package__)
        # Stated values some studies also vary (rmtp's HACK period).
        sens = repr(m.OPEN_VALUES) + (f"\n{m.STATED_VALUES!r}" if hasattr(m, "STATED_VALUES") else "")
    return hashlib.sha256(f"{params}\n{sens}".encode()).hexdigest()[:32]


def key(baseline: dict[str, str] | None = None) -> dict[str, Any]:
    """The stored figures' key: the quick studies' output hashes (from the
    ``output_hashes`` baseline, which CI holds to the code) and each
    study's own key."""
    hashes = output_hashes.load_baseline() if baseline is None else baseline
    quick = sorted(f"{k}={v}" for k, v in hashes.items() if k.startswith("study:"))
    variants = repr(sorted((name, v) for name, (v, _) in VARIANTS.items()))
    return {"quick_outputs": hashlib.sha256("\n".join(quick).encode()).hexdigest()[:32],
            "studies": {s: study_key(s) for s in sorted(FIGURES)},
            "variants": hashlib.sha256(variants.encode()).hexdigest()[:32]}


def run(root: Path, workers: int | None = None, progress: bool = False) -> None:
    """Every study at full size, with its sensitivity runs, into
    ``root/<study>``, and each variant into ``root/<variant>``; then the
    key of the code that ran them, in ``root/key.json``, last, so that a
    run cut short leaves none."""
    from .. import experiments

    (root / KEY_FILE).unlink(missing_ok=True)
    for study in sorted(FIGURES):
        mod = experiments.get(study)
        experiments.reproduce(study, mod.Params(), root / study, workers=workers, progress=progress,
                              sensitivity=mod.HAS_SENSITIVITY, overwrite=True)
    for name, (v, _) in sorted(VARIANTS.items()):
        params = experiments.get(v.study).Params()
        params = dataclasses.replace(params.quick() if v.quick else params, **dict(v.settings))
        experiments.reproduce(v.study, params, root / name, workers=workers, progress=progress,
                              cases=v.cases or None, overwrite=True)
    (root / KEY_FILE).write_text(json.dumps(key(), indent=1, sort_keys=True) + "\n")


def check_key(root: Path) -> None:
    """A folder's runs are the current code's: ``run`` wrote them under the
    key the code has now. Figures from older runs stored under today's key
    would pass the tests while saying what the code no longer does."""
    path = root / KEY_FILE
    if not path.is_file():
        raise ValueError(f"{root}: no {KEY_FILE}; only a folder written by --run (and not cut short) can be read")
    if json.loads(path.read_text()) != key():
        raise ValueError(f"{root}: its runs were made by other code or settings ({KEY_FILE} differs from the "
                         f"current key); run the studies again with --run")


def study_figures(root: Path) -> dict[str, dict[str, str]]:
    """Each study's figures as its page should quote them, from the folder
    ``root/<study>`` its full run wrote and ``root/<variant>`` of each
    variant the page quotes."""
    def folder_of(name: str) -> Path:
        folder = root / name
        if not (folder / "report.md").is_file():
            raise FileNotFoundError(f"{folder}: no full run of {name} here (report.md missing)")
        return folder

    out = {study: figures_of(folder_of(study)) for study, figures_of in sorted(FIGURES.items())}
    for name, (v, figures_of) in sorted(VARIANTS.items()):
        out[v.study].update({f"{name}: {k}": text for k, text in figures_of(folder_of(name)).items()})
    return out


def unsaid(figures: dict[str, dict[str, str]], page_of: Callable[[str], Path] = page_path
           ) -> list[tuple[str, str, str]]:
    """(study, figure, text) of every figure its page does not say."""
    missing = []
    for study, figs in sorted(figures.items()):
        page = normalise(page_of(study).read_text())
        missing += [(study, name, text) for name, text in figs.items() if normalise(text) not in page]
    return missing


def load() -> dict[str, Any]:
    return json.loads(STORED.read_text())


def save(figures: dict[str, dict[str, str]], path: Path = STORED) -> None:
    doc = {"about": "Figures the study pages quote from the full studies, and the key of the code that made "
                    "them; see python/mediasim/validation/study_pages.py. Update with "
                    "python -m mediasim.validation.study_pages --run DIR --update.",
           "key": key(), "figures": figures}
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    import argparse
    import time

    ap = argparse.ArgumentParser(prog="python -m mediasim.validation.study_pages",
                                 description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--run", type=Path, metavar="DIR", help="run every full study into DIR (replaced)")
    src.add_argument("--from", dest="from_", type=Path, metavar="DIR", help="read the full studies DIR holds")
    ap.add_argument("--update", action="store_true", help="store the figures once every page says them")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        ap.error(f"--workers must be at least 1 (got {args.workers})")
    root = args.run or args.from_
    if args.run:
        t0 = time.perf_counter()
        run(root, args.workers, progress=True)
        print(f"full studies written to {root} in {time.perf_counter() - t0:.0f} s")
    try:
        check_key(root)
    except ValueError as e:
        print(f"error: {e}")
        return 2
    figures = study_figures(root)
    missing = unsaid(figures)
    for study, name, text in missing:
        print(f"{page_path(study).relative_to(ROOT)}: {name}: does not say {text!r}")
    total = sum(len(f) for f in figures.values())
    print(f"{total} figures from {len(figures)} studies; {len(missing)} not on their pages")
    if missing:
        return 1
    if args.update:
        save(figures)
        print(f"stored in {STORED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

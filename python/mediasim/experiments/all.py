"""Every reference study in one command (``mediasim reproduce all``): one
folder, report and self-contained HTML page per study, plus an index in
Markdown and HTML with each study's seed, replications and mode and the
engine that ran it. Wall times are logged, not written: the same command
writes the same bytes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..log import get as _logger
from ..outfolder import one_output
from . import STUDIES, get, reproduce

log = _logger("experiments")


@one_output("studies")
def reproduce_all(out: Path, quick: bool = False, workers: int | None = None, progress: bool = True,
                  studies: tuple[str, ...] | None = None, overwrite: bool = False) -> Path:
    from ..campaign.atomic import write_bytes
    from ..campaign.keys import engine_identity
    from ..reporting.html import markdown_html, page
    from ..reporting.tables import md_table

    import pandas as pd

    engine = engine_identity()
    stamp = f"mediasim {engine['engine_version']} (engine build {engine['engine_build']})"
    rows: list[dict[str, Any]] = []
    for name in studies or tuple(STUDIES):
        mod = get(name)
        params = mod.Params().quick() if quick else mod.Params()
        t0 = time.perf_counter()
        report = reproduce(name, params, out / name, workers=workers, progress=progress,
                           stamp=f"{stamp}; seed {params.seed}, {params.replications} replications")
        log.info("%s: %.1f s", name, time.perf_counter() - t0)
        rows.append({"study": name, "report": f"[{name}/report.md]({name}/report.md)", "seed": params.seed,
                     "replications": params.replications, "mode": "quick" if quick else "full"})
    table = pd.DataFrame(rows)
    md = "\n".join([
        "# mediasim reference studies", "",
        f"{stamp}. {len(rows)} studies, {'quick' if quick else 'full'} mode.", "",
        md_table(table, 4), "",
        "Each study's parameters (stated and chosen) are at the end of its report.", "",
    ])
    index = out / "index.md"
    write_bytes(index, md.encode())
    # The HTML index links the HTML pages.
    body = markdown_html(md).replace("/report.md\"", "/report.html\"")
    write_bytes(out / "index.html", page("mediasim reference studies", body).encode())
    return index

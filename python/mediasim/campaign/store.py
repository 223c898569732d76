"""A campaign folder on disk.

Layout::

    OUT/campaign.json          engine identity, the runs of the last invocation
    OUT/runs/<key>/            one finished run:
        scenario.json          the canonical scenario it ran
        meta.json              the engine's run metadata
        <table>.parquet        one file per table (the metadata embedded too)
        run.json               written last: labels, seed, replication,
                               engine version and build, and the size of
                               every file above (the marker)
    OUT/runs/.partial/         runs being written (renamed into runs/ whole)
    OUT/failed/<key>.json      a run that failed: its error and traceback

A run counts as finished only when ``run.json`` is in place and every file
it lists has its listed size; anything else under ``runs/`` (a folder a
kill cut short, a truncated file) is damaged: it is removed and run again.
A run folder is complete or absent because it is written under
``.partial/`` and renamed into place in one step.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path
from typing import Any

from ..errors import CampaignError
from ..results import without_host_facts
from .atomic import read_json, remove, write_json, write_new_files
from .keys import canonical

MARKER = "run.json"
#: The files a campaign (or a study campaign) writes in its folder itself.
ROOT_FILES = ("campaign.json", "index.md")


def _leftover(name: str) -> bool:
    """Whether ``name`` is the temporary file of a root file's write cut
    short (``open`` removes them)."""
    return any(name.startswith(f".{f}.tmp-") for f in ROOT_FILES)


class RunStore:
    def __init__(self, root: Path, engine: dict[str, str]):
        self.root = Path(root)
        self.engine = engine
        self.runs = self.root / "runs"
        self.partial = self.runs / ".partial"
        self.failed = self.root / "failed"

    @classmethod
    def open(cls, root: str | Path, engine: dict[str, str]) -> "RunStore":
        """The store at ``root`` (created if needed). A folder holding runs
        of another engine build is refused: its results would mix with
        these."""
        root = Path(root)
        # A process killed while writing the index (or a study campaign's
        # index.md) leaves its temporary file (atomic.write_bytes) and, in
        # a new folder, nothing else but runs/ and failed/: the folder is
        # still this campaign's.
        if root.is_dir():
            for name in ROOT_FILES:
                for f in root.glob(f".{name}.tmp-*"):
                    f.unlink(missing_ok=True)
        store = cls.check(root, engine)
        try:
            for d in (store.runs, store.partial, store.failed):
                d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CampaignError(
                f"{store.root}: cannot create the campaign's folder there ({e.strerror or e})") from None
        store.clean_partials()
        return store

    @classmethod
    def check(cls, root: str | Path, engine: dict[str, str]) -> "RunStore":
        """The store at ``root`` as ``open`` would find it, refusing what
        ``open`` refuses, with nothing made, removed or changed (a
        campaign's dry run)."""
        store = cls(Path(root), engine)
        index = read_json(store.root / "campaign.json")
        if index is None and store.root.is_dir() and any(
                p.name not in ("runs", "failed") and not _leftover(p.name) for p in store.root.iterdir()):
            raise CampaignError(
                f"{store.root} holds files that are not a campaign (no campaign.json): a campaign's folder holds "
                "its runs only. Use a new or empty folder.")
        if index and index.get("engine_build") not in (None, engine["engine_build"]):
            raise CampaignError(
                f"{store.root} holds runs of another engine (version {index.get('engine_version')}, build "
                f"{index.get('engine_build')}); this is version {engine['engine_version']}, build "
                f"{engine['engine_build']}. Use a new folder, or remove the old runs to replace them.")
        return store

    def clean_partials(self) -> None:
        """Removes what a killed process left half-written: runs under
        ``.partial/`` and failure records' temporary files."""
        for d in self.partial.iterdir():
            remove(d)
        for f in self.failed.glob(".*.tmp-*"):
            f.unlink(missing_ok=True)

    def status(self, key: str) -> str:
        """``done``, ``missing`` or ``damaged``. Plain ``os`` calls on
        strings, one ``stat`` per listed file: a campaign checks every run
        when it starts and again when it is read back."""
        d = os.path.join(self.runs, key)
        try:
            with open(os.path.join(d, MARKER), "rb") as f:
                info = json.loads(f.read())
        except FileNotFoundError:
            return "damaged" if os.path.lexists(d) else "missing"
        except (OSError, ValueError):
            return "damaged"
        if not isinstance(info, dict) or not isinstance(info.get("files"), dict):
            return "damaged"
        for name, size in info["files"].items():
            try:
                st = os.stat(os.path.join(d, name))
            except (OSError, ValueError):
                return "damaged"
            if not stat.S_ISREG(st.st_mode) or st.st_size != size:
                return "damaged"
        return "done"

    def discard(self, key: str) -> None:
        """Removes whatever is at a run's place: its folder, or a file or
        link where its folder should be (a damaged run of either kind
        must go, or the new run could not be renamed into place)."""
        remove(self.runs / key)

    def info(self, key: str) -> dict[str, Any] | None:
        """A stored run's marker, or None if it is missing or damaged."""
        return read_json(self.runs / key / MARKER)

    def save(self, task: Any, tables: dict[str, bytes], meta: dict[str, Any]) -> None:
        """Writes one finished run: into ``.partial/`` first, the marker
        last, then renamed into ``runs/`` in one step. Nothing of the host
        or the moment goes in (no wall time): the same run writes the same
        bytes."""
        tmp = self.partial / f"{task.key}-{os.getpid()}-{time.monotonic_ns()}"
        tmp.mkdir(parents=True)
        files = {"scenario.json": (canonical(task.scenario) + "\n").encode()}
        files["meta.json"] = (json.dumps(without_host_facts(meta), indent=2, sort_keys=True) + "\n").encode()
        files.update({f"{name}.parquet": data for name, data in tables.items()})
        write_new_files(tmp, files)
        # The marker last, once everything it lists is on disk.
        write_json(tmp / MARKER, {
            "key": task.key, "labels": task.labels, "seed": task.seed, "replication": task.replication,
            **self.engine, "tables": sorted(tables),
            "files": {name: len(data) for name, data in files.items()},
        })
        try:
            os.rename(tmp, self.runs / task.key)
        except OSError:
            if self.status(task.key) == "done":
                # Another process stored the same run first: identical by
                # determinism, so ours is not needed.
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                # Something damaged holds the run's place: ours replaces it.
                self.discard(task.key)
                try:
                    os.rename(tmp, self.runs / task.key)
                except OSError as e:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise CampaignError(f"{self.runs / task.key}: cannot store the run there "
                                        f"({e.strerror or e})") from None
        (self.failed / f"{task.key}.json").unlink(missing_ok=True)

    def save_failure(self, task: Any, error: str, traceback: str) -> None:
        write_json(self.failed / f"{task.key}.json", {
            "key": task.key, "labels": task.labels, "seed": task.seed, "replication": task.replication,
            **self.engine, "error": error, "traceback": traceback,
        })

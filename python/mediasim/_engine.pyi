"""Type stubs of the native engine module (crates/py)."""

from collections.abc import Callable
from typing import Any

import numpy as np

def run(
    scenario_json: str,
    seed: int = 0,
    replication: int = 0,
    pcap_dir: str | None = None,
    pcap: bool = False,
    trace: bool = False,
    max_events: int | None = None,
    max_wall_s: float | None = None,
    max_memory_mb: float | None = None,
    progress: Callable[[float, int], object] | None = None,
    only: list[str] | None = None,
    lists: bool = False,
) -> tuple[dict[str, dict[str, np.ndarray | list[Any]]], str]: ...
def validate(scenario_json: str) -> None: ...
def schema() -> str: ...
def version() -> str: ...
def build_id() -> str: ...
def media_scaling_rates(flow_json: str) -> list[tuple[float, float]]: ...
def tfrc_throughput(s: float, r: float, p: float, b: float, t_rto: float) -> float: ...
def fec_residual_loss(code: str, k: int, n: int, p_media: float, p_repair: float) -> float: ...

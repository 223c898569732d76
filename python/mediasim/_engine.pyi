"""Type stubs of the native engine module (crates/py)."""

import numpy as np

def run(
    scenario_json: str,
    seed: int = 0,
    replication: int = 0,
    pcap_dir: str | None = None,
    pcap: bool = False,
    trace: bool = False,
) -> tuple[dict[str, dict[str, np.ndarray | list[str]]], str]: ...
def validate(scenario_json: str) -> None: ...
def schema() -> str: ...
def version() -> str: ...

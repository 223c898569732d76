"""A scenario's topology as a picture: nodes, links labelled with their
rate and delay, group members marked, and the flows listed with their
endpoints (``mediasim show``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _rate(bps: float) -> str:
    for unit, k in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= k:
            return f"{bps / k:g} {unit}"
    return f"{bps:g} bit/s"


def link_label(link: dict[str, Any]) -> str:
    """``rate, delay`` of a link; both directions when they differ."""
    ab, ba = link.get("ab") or {}, link.get("ba") or {}
    fwd = f"{_rate(ab.get('rate_bps', link['rate_bps']))}, {ab.get('delay_ms', link['delay_ms']):g} ms"
    rev = f"{_rate(ba.get('rate_bps', link['rate_bps']))}, {ba.get('delay_ms', link['delay_ms']):g} ms"
    return fwd if fwd == rev else f"{fwd} / {rev}"


def flow_lines(data: dict[str, Any]) -> list[str]:
    """One line per flow and session: name, type, endpoints."""
    out = []
    for f in data.get("flows", []):
        dst = f.get("dst") or f"group {f.get('group')}"
        out.append(f"{f['name']} ({f['type']}): {f['src']} -> {dst}")
    for s in data.get("rtp_sessions", []):
        out.append(f"{s['name']} (RTP session): {', '.join(m['node'] for m in s['members'])}")
    for s in data.get("rmtp_sessions", []):
        n = sum(len(g["receivers"]) for g in s["subgroups"])
        out.append(f"{s['name']} (RMTP): {s['sender']} -> {len(s['subgroups'])} DRs, {n} receivers")
    return out


def node_addresses(data: dict[str, Any]) -> dict[str, str]:
    """Each node's IPv4 address in the pcap files: 10.0.0.1 plus its index
    in ``nodes`` (the engine's rule; a run's ``meta["addresses"]`` holds
    the same, which a test checks)."""
    import ipaddress

    return {n["name"]: str(ipaddress.IPv4Address(0x0A000001 + i)) for i, n in enumerate(data["nodes"])}


def draw(data: dict[str, Any], path: str | Path, seed: int = 1) -> Path:
    """Draws the scenario ``data`` to ``path`` (.png, .svg or .pdf)."""
    import matplotlib
    import networkx as nx
    from matplotlib.figure import Figure

    g = nx.Graph()
    g.add_nodes_from(n["name"] for n in data["nodes"])
    for link in data["links"]:
        g.add_edge(link["a"], link["b"], label=link_label(link))
    # Kamada-Kawai keeps chains and dumbbells readable; deterministic.
    pos = nx.kamada_kawai_layout(g) if g.number_of_edges() else nx.circular_layout(g)
    n = g.number_of_nodes()
    fig = Figure(figsize=(min(4 + 0.6 * n, 16), min(3 + 0.4 * n, 12)))
    ax = fig.subplots()
    members = {m for grp in data.get("groups", []) for m in grp["members"]}
    colors = ["#f4a261" if v in members else "#8ecae6" for v in g.nodes]
    nx.draw_networkx_edges(g, pos, ax=ax, edge_color="#555")
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colors, node_size=900 if n < 40 else 200)
    if n < 40:  # the node's address in pcap files under its name
        addr = node_addresses(data)
        nx.draw_networkx_labels(g, pos, ax=ax, labels={v: f"{v}\n{addr[v]}" for v in g.nodes}, font_size=7)
    else:
        nx.draw_networkx_labels(g, pos, ax=ax, font_size=6)
    if n < 40:
        nx.draw_networkx_edge_labels(g, pos, ax=ax, edge_labels=nx.get_edge_attributes(g, "label"), font_size=7)
    lines = flow_lines(data)
    if lines:
        shown = lines[:12] + ([f"... and {len(lines) - 12} more"] if len(lines) > 12 else [])
        ax.text(0.01, 0.01, "\n".join(shown), transform=ax.transAxes, fontsize=8, va="bottom",
                bbox={"boxstyle": "round", "fc": "white", "ec": "#999"})
    ax.set_title(f"{data.get('name') or 'scenario'}: {data['duration_s']} s"
                 + (" (orange: group members)" if members else ""))
    ax.axis("off")
    fig.tight_layout()
    path = Path(path)
    # A bare Figure: no backend switch in the caller's process. SVG text
    # stays text (searchable, editable).
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(path, dpi=120)
    return path

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


def _steps(v: Any, fmt) -> str:
    """A number, or a schedule as its values in turn (the first four)."""
    if isinstance(v, (int, float)):
        return fmt(v)
    steps = v["steps"] if isinstance(v, dict) else v
    shown = " > ".join(fmt(x[1]) for x in steps[:4]) + (" > ..." if len(steps) > 4 else "")
    return shown + (f" every {v['repeat_s']:g} s" if isinstance(v, dict) else "")


def _trace_name(t: dict[str, Any]) -> str:
    if "builtin" in t:
        return f"trace {t['builtin']}"
    if "file" in t:
        return f"trace {Path(str(t['file'])).name}"
    return f"trace of {len(t.get('opportunities_ms', []))} opportunities"


def _direction(link: dict[str, Any], d: dict[str, Any]) -> str:
    own = "rate_bps" in d or "trace" in d
    src = d if own else link
    cap = _trace_name(src["trace"]) if "trace" in src else _steps(src["rate_bps"], _rate)
    delay = _steps(d.get("delay_ms", link["delay_ms"]), lambda x: f"{x:g} ms")
    extra = [k for k in ("outages", "jitter") if k in d or k in link]
    return f"{cap}, {delay}" + (f" ({', '.join(extra)})" if extra else "")


def link_label(link: dict[str, Any]) -> str:
    """``rate, delay`` of a link; both directions when they differ. A
    schedule shows its values in turn, a trace its name."""
    ab, ba = link.get("ab") or {}, link.get("ba") or {}
    fwd, rev = _direction(link, ab), _direction(link, ba)
    return fwd if fwd == rev else f"{fwd} / {rev}"


def changes(link: dict[str, Any]) -> bool:
    """Whether a link's rate, delay or state changes in either direction."""
    parts = [link, link.get("ab") or {}, link.get("ba") or {}]
    return any(not isinstance(p.get(k, 0), (int, float)) for p in parts for k in ("rate_bps", "delay_ms")) or any(
        k in p for p in parts for k in ("trace", "outages", "jitter"))


def capacity_curves(data: dict[str, Any], bin_s: float = 0.1) -> list[tuple[str, list[float], list[float]]]:
    """(direction, times, Mbit/s) of each changing direction's capacity
    over the run: a schedule's steps, a trace's opportunities per
    ``bin_s``; zero inside outage windows."""
    from .. import traces

    data = traces.resolve(data)
    dur = float(data["duration_s"])
    out = []
    for link in data["links"]:
        if not changes(link):
            continue
        for a, b, side in ((link["a"], link["b"], "ab"), (link["b"], link["a"], "ba")):
            d = link.get(side) or {}
            src = d if ("rate_bps" in d or "trace" in d) else link
            n = max(1, int(round(dur / bin_s)))
            times = [k * bin_s for k in range(n + 1)]
            if "trace" in src:
                t = src["trace"]
                ms, size = t["opportunities_ms"], t.get("bytes_per_opportunity", traces.OPPORTUNITY_BYTES)
                period = ms[-1] / 1000
                counts = [0] * (n + 1)
                passes = int(dur / period) + 1 if t.get("repeat", True) else 1
                for p in range(passes):
                    for m in ms:
                        k = int((m / 1000 + p * period) / bin_s)
                        if k <= n:
                            counts[k] += 1
                mbps = [c * size * 8 / bin_s / 1e6 for c in counts]
            else:
                r = src["rate_bps"]
                steps = [[0, r]] if isinstance(r, (int, float)) else (r["steps"] if isinstance(r, dict) else r)
                rep = r.get("repeat_s") if isinstance(r, dict) else None
                mbps = []
                for t_s in times:
                    x = t_s % rep if rep else t_s
                    mbps.append([v for s0, v in steps if s0 <= x + 1e-12][-1] / 1e6)
            out_spec = d.get("outages") or link.get("outages") or {}
            for w0, w1 in out_spec.get("down_s", []):
                mbps = [0.0 if w0 <= t_s < w1 else v for t_s, v in zip(times, mbps)]
            out.append((f"{a}->{b}", times, mbps))
    return out


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


#: chosen: Kamada-Kawai's layout keeps chains, dumbbells and trees
#: readable, but holds every pair of nodes and took 1.2 s at 200 nodes
#: and 11 s at 800 (a star, 2026-12-06); a larger scenario is drawn as a
#: tree (``tree_positions``), in time linear in its nodes and links.
MAX_KAMADA_KAWAI_NODES = 200
#: chosen: above this many nodes their names overlap; none is drawn.
MAX_NAMED_NODES = 400


def tree_positions(g: Any) -> dict[Any, tuple[float, float]]:
    """Positions that draw ``g`` as the tree a breadth-first search finds
    from the node of most links in each connected part (the first in the
    scenario's order on a tie): a node's x is its hop count from that
    root, the tree's leaves are spaced evenly down the picture, and a
    node sits at the mean height of its children, so that a multicast
    tree or a star fans out without crossings. Links off the tree are
    drawn where their ends are. Parts are stacked in the scenario's
    order; x and y are within [0, 1]."""
    import networkx as nx

    order = {v: i for i, v in enumerate(g.nodes)}
    depth: dict[Any, int] = {}
    y: dict[Any, float] = {}
    slot = 0
    for part in sorted(nx.connected_components(g), key=lambda c: min(order[v] for v in c)):
        root = min(part, key=lambda v: (-g.degree(v), order[v]))
        children: dict[Any, list[Any]] = {}
        depth[root] = 0
        frontier = [root]
        while frontier:  # breadth first, neighbours in the scenario's order
            nxt = []
            for v in frontier:
                children[v] = [w for w in sorted(g[v], key=order.__getitem__) if w not in depth]
                for w in children[v]:
                    depth[w] = depth[v] + 1
                nxt += children[v]
            frontier = nxt
        stack = [(root, False)]
        while stack:  # depth first, children before their parent (no recursion: a chain may be long)
            v, done = stack.pop()
            if done or not children[v]:
                if children[v]:
                    y[v] = sum(y[w] for w in children[v]) / len(children[v])
                else:
                    y[v], slot = float(slot), slot + 1
                continue
            stack.append((v, True))
            stack.extend((w, False) for w in reversed(children[v]))
    deepest = max(depth.values(), default=0) or 1
    lowest = max(slot - 1, 1)
    return {v: (depth[v] / deepest, 1.0 - y[v] / lowest) for v in g.nodes}


def draw(data: dict[str, Any], path: str | Path) -> Path:
    """Draws the scenario ``data`` to ``path`` (.png, .svg or .pdf)."""
    import matplotlib
    import networkx as nx
    from matplotlib.figure import Figure

    from ..campaign.atomic import save_figure

    curves = capacity_curves(data)
    g = nx.Graph()
    g.add_nodes_from(n["name"] for n in data["nodes"])
    for link in data["links"]:
        g.add_edge(link["a"], link["b"], label=link_label(link))
    n = g.number_of_nodes()
    if not g.number_of_edges():
        pos = nx.circular_layout(g)
    elif n <= MAX_KAMADA_KAWAI_NODES:
        pos = nx.kamada_kawai_layout(g)  # deterministic
    else:
        pos = tree_positions(g)
    height = min(3 + 0.4 * n, 12)
    lines = flow_lines(data)
    shown = lines[:12] + ([f"... and {len(lines) - 12} more"] if len(lines) > 12 else [])
    # The flows under the graph in a row of their own, so that they never
    # cover a node; the changing links' capacity under them.
    rows = [height] + ([0.17 * len(shown) + 0.3] if shown else []) + ([2.5] if curves else [])
    fig = Figure(figsize=(min(4 + 0.6 * n, 16), sum(rows)))
    axes = fig.subplots(len(rows), 1, gridspec_kw={"height_ratios": rows}, squeeze=False)[:, 0]
    ax = axes[0]
    if shown:
        axes[1].axis("off")
        axes[1].text(0.01, 1.0, "\n".join(shown), transform=axes[1].transAxes, fontsize=8, va="top",
                     bbox={"boxstyle": "round", "fc": "white", "ec": "#999"})
    if curves:
        cax = axes[-1]
        for name, times, mbps in curves:
            cax.step(times, mbps, where="post", label=name, lw=1)
        cax.set_xlabel("time (s)")
        cax.set_ylabel("capacity (Mbit/s)")
        cax.set_ylim(bottom=0)
        cax.grid(alpha=0.3)
        cax.legend(fontsize=7, loc="upper right", ncol=2)
    members = {m for grp in data.get("groups", []) for m in grp["members"]}
    colors = ["#f4a261" if v in members else "#8ecae6" for v in g.nodes]
    nx.draw_networkx_edges(g, pos, ax=ax, edge_color="#555")
    size = 900 if n < 40 else 200 if n <= MAX_NAMED_NODES else 20
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colors, node_size=size)
    if n < 40:  # the node's address in pcap files under its name
        addr = node_addresses(data)
        nx.draw_networkx_labels(g, pos, ax=ax, labels={v: f"{v}\n{addr[v]}" for v in g.nodes}, font_size=7)
    elif n <= MAX_NAMED_NODES:
        nx.draw_networkx_labels(g, pos, ax=ax, font_size=6)
    if n < 40:
        nx.draw_networkx_edge_labels(g, pos, ax=ax, edge_labels=nx.get_edge_attributes(g, "label"), font_size=7)
    ax.set_title(f"{data.get('name') or 'scenario'}: {data['duration_s']} s"
                 + (f", {n:,} nodes (unnamed above {MAX_NAMED_NODES})" if n > MAX_NAMED_NODES else "")
                 + (" (orange: group members)" if members else ""))
    ax.axis("off")
    fig.tight_layout()
    path = Path(path)
    # A bare Figure: no backend switch in the caller's process. SVG text
    # stays text (searchable, editable).
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        save_figure(fig, path, dpi=120)  # whole or not at all
    return path

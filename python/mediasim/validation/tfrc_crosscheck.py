"""Cross-check of TFRC against ns-2's TFRC agent (Agent/TFRC and
Agent/TFRCSink, the implementation the SVC study used).

The TCP cross-check dumbbell (10 Mbit/s, 20 ms bottleneck with a 100-packet
drop-tail queue, 100 Mbit/s 1 ms access links) carries four TFRC flows of
1000-byte packets and four TCP SACK flows (MSS 960, delayed ACKs) for 60 s.
ns-2's TCP is aligned as in the RED cross-check (minimum RTO 200 ms,
delayed-ACK timeout 100 ms, initial window 2, no limited transmit); its
TFRC agent runs with its defaults, which include the RTT-based spacing of
RFC 5348 section 4.5 (ns-2's `ca_`), on in mediasim too.

Compared: the TFRC flows' mean packets sent and mean packet loss rate
(lost over sent, at the receiver), within 15%. ns-2's TFRC does not expose
its loss event rate to Tcl, so the packet loss rate stands for it (the
two move together here: loss events are mostly single losses). The TCP
flows' mean is shown for reference.

Run ``python -m mediasim.validation.tfrc_crosscheck`` (``--save-references``
stores ns-2's figures in tests/data/tfrc_references.json, which
tests/test_tfrc.py holds mediasim to). A reference check, not a dependency.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .. import _engine
from ..results import Results
from .bench import tcp_dumbbell

DURATION_S = 60.0
TFRC_FLOWS = 4
TCP_FLOWS = 4
TOLERANCE = 0.15
REFERENCES = Path(__file__).resolve().parents[3] / "tests" / "data" / "tfrc_references.json"

_TCL = r"""
set ns [new Simulator]
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 10Mb 20ms DropTail
$ns queue-limit $r1 $r2 100
Agent/TCP set packetSize_ 960
Agent/TCP set window_ 10000
Agent/TCP set windowInit_ 2
Agent/TCP set minrto_ 0.2
Agent/TCPSink/DelAck set interval_ 0.1
Agent/TFRC set packetSize_ 1000
for {set i 0} {$i < TOTAL} {incr i} {
    set s($i) [$ns node]
    set d($i) [$ns node]
    $ns duplex-link $s($i) $r1 100Mb 1ms DropTail
    $ns duplex-link $r2 $d($i) 100Mb 1ms DropTail
    if {$i < NTFRC} {
        set a($i) [new Agent/TFRC]
        set k($i) [new Agent/TFRCSink]
        $ns attach-agent $s($i) $a($i)
        $ns attach-agent $d($i) $k($i)
        $ns connect $a($i) $k($i)
        $ns at 0.0 "$a($i) start"
    } else {
        set a($i) [new Agent/TCP/Sack1]
        set k($i) [new Agent/TCPSink/Sack1/DelAck]
        $ns attach-agent $s($i) $a($i)
        $ns attach-agent $d($i) $k($i)
        $ns connect $a($i) $k($i)
        set ftp($i) [new Application/FTP]
        $ftp($i) attach-agent $a($i)
        $ns at 0.0 "$ftp($i) start"
    }
}
proc finish {} {
    global a
    for {set i 0} {$i < NTFRC} {incr i} { puts "tfrc $i [$a($i) set ndatapack_] [$a($i) set true_loss_rate_]" }
    for {set i NTFRC} {$i < TOTAL} {incr i} { puts "tcp $i [$a($i) set ack_]" }
    exit 0
}
$ns at DURATION "finish"
$ns run
"""


def ns2_script(duration_s: float = DURATION_S) -> str:
    return (_TCL.replace("TOTAL", str(TFRC_FLOWS + TCP_FLOWS)).replace("NTFRC", str(TFRC_FLOWS))
            .replace("DURATION", f"{duration_s:g}"))


def mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs)


def ns2_run(duration_s: float = DURATION_S) -> dict[str, Any]:
    if shutil.which("ns") is None:
        raise RuntimeError("ns-2 not found: install it with `apt-get install ns2`")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "tfrc.tcl"
        script.write_text(ns2_script(duration_s))
        out = subprocess.run(["ns", str(script)], capture_output=True, text=True, check=True).stdout
    tfrc = [line.split() for line in out.splitlines() if line.startswith("tfrc ")]
    tcp = [line.split() for line in out.splitlines() if line.startswith("tcp ")]
    return {"simulator": "ns-2", "tfrc_packets": mean(int(x[2]) for x in tfrc),
            "tfrc_loss_rate": mean(float(x[3]) for x in tfrc), "tcp_segments": mean(int(x[2]) for x in tcp)}


def scenario(duration_s: float = DURATION_S) -> dict[str, Any]:
    sc = tcp_dumbbell(TFRC_FLOWS + TCP_FLOWS, duration_s)
    sc["name"] = "tfrc-crosscheck"
    sc["flows"] = [f for f in sc["flows"] if f["type"] == "tcp"]
    for f in sc["flows"][:TFRC_FLOWS]:
        del f["tcp"]
        f["type"] = "tfrc"
    for f in sc["flows"][TFRC_FLOWS:]:
        f["tcp"].update({"min_rto_ms": 200, "delack_timeout_ms": 100, "initial_window": 2,
                         "limited_transmit": False})
    sc["measure"] = {"packets": False}
    return sc


def mediasim_run(duration_s: float = DURATION_S) -> dict[str, Any]:
    raw, meta = _engine.run(json.dumps(scenario(duration_s)), seed=1)
    res = Results.from_engine(raw, meta)
    t = res.tfrc
    loss = t["lost_packets"] / (t["packets_received"] + t["lost_packets"])
    return {"simulator": "mediasim", "tfrc_packets": float(t["packets_sent"].mean()),
            "tfrc_loss_rate": float(loss.mean()), "tcp_segments": float((res.tcp["bytes_acked"] / 960).mean())}


def gap(m: dict[str, Any], ref: dict[str, Any], key: str) -> float:
    return abs(m[key] - ref[key]) / abs(ref[key])


def stored_reference(path: Path = REFERENCES) -> dict[str, Any]:
    return json.loads(path.read_text())["ns-2"]


def main(argv: list[str]) -> None:
    ref = ns2_run()
    if "--save-references" in argv:
        version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True)
        doc = {"about": "ns-2's TFRC agent on the TFRC cross-check dumbbell (mediasim.validation.tfrc_crosscheck); "
                        "tests/test_tfrc.py holds mediasim within 15% of it.",
               "provenance": {"ns-2": version.stdout.strip() or "unknown",
                              "command": "python -m mediasim.validation.tfrc_crosscheck --save-references"},
               "ns-2": ref}
        REFERENCES.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {REFERENCES}")
        return
    m = mediasim_run()
    print(f"{'':10} {'tfrc packets':>14} {'tfrc loss rate':>15} {'tcp segments':>13}")
    for row in (m, ref):
        print(f"{row['simulator']:10} {row['tfrc_packets']:14.1f} {row['tfrc_loss_rate']:15.5f} {row['tcp_segments']:13.1f}")
    print(f"{'gap':10} {gap(m, ref, 'tfrc_packets'):14.1%} {gap(m, ref, 'tfrc_loss_rate'):15.1%} "
          f"{gap(m, ref, 'tcp_segments'):13.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""The reference dumbbell as an ns-2 Tcl script (one generator for the
side-by-side benchmark and the behavioural cross-check). Mirrors
``mediasim.validation.bench.tcp_dumbbell``: 10 Mbit/s 20 ms bottleneck with a
100-packet drop-tail queue, 100 Mbit/s 1 ms access links, one 1 Mbit/s CBR
flow and N bulk TCP flows with 1000-byte packets (packetSize_ 960 plus
40 bytes of headers)."""

from __future__ import annotations

_TCL = r"""
set ns [new Simulator]
set n {n}
set r1 [$ns node]
set r2 [$ns node]
{queue_settings}
$ns duplex-link $r1 $r2 10Mb 20ms {queue}
$ns queue-limit $r1 $r2 100
set qmon [$ns monitor-queue $r1 $r2 [open /dev/null w]]
Agent/TCP set packetSize_ 960
Agent/TCP set window_ {window}
Agent/TCP set windowInit_ {iw}
{extra}
set cs [$ns node]
set cd [$ns node]
$ns duplex-link $cs $r1 100Mb 1ms DropTail
$ns duplex-link $r2 $cd 100Mb 1ms DropTail
set udp [new Agent/UDP]
$ns attach-agent $cs $udp
set null [new Agent/Null]
$ns attach-agent $cd $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 972
$cbr set rate_ 1Mb
$cbr attach-agent $udp
$ns at 0.0 "$cbr start"
for {{set i 0}} {{$i < $n}} {{incr i}} {{
    set s($i) [$ns node]
    set d($i) [$ns node]
    $ns duplex-link $s($i) $r1 100Mb 1ms DropTail
    $ns duplex-link $r2 $d($i) 100Mb 1ms DropTail
    set tcp($i) [new Agent/TCP/{agent}]
    $ns attach-agent $s($i) $tcp($i)
    set sink($i) [new Agent/{sink}]
    $ns attach-agent $d($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at 0.0 "$ftp($i) start"
}}
proc sample {{}} {{
    global ns tcp n
    set now [$ns now]
    for {{set i 0}} {{$i < $n}} {{incr i}} {{
        puts "cwnd $i $now [$tcp($i) set cwnd_]"
    }}
    $ns at [expr $now + {sample}] "sample"
}}
set bq [[$ns link $r1 $r2] queue]
proc sample_queue {{}} {{
    global ns bq
    set now [$ns now]
    puts "q $now [$bq set ave_]"
    $ns at [expr $now + {queue_sample}] "sample_queue"
}}
proc finish {{}} {{
    global qmon tcp n
    puts "bdepartures [$qmon set bdepartures_]"
    puts "pdepartures [$qmon set pdepartures_]"
    puts "pdrops [$qmon set pdrops_]"
    puts "parrivals [$qmon set parrivals_]"
    for {{set i 0}} {{$i < $n}} {{incr i}} {{
        puts "acked $i [$tcp($i) set ack_]"
    }}
    exit 0
}}
{sampling}
{queue_sampling}
$ns at {duration} "finish"
$ns run
"""

AGENTS = {"sack": ("Sack1", "TCPSink/Sack1/DelAck"), "newreno": ("Newreno", "TCPSink/DelAck")}


def script(n: int, duration_s: float, flavor: str = "sack", sample_s: float | None = None,
           window: int = 16384, iw: int = 3, extra: str = "", queue: str = "DropTail",
           queue_settings: str = "", queue_sample_s: float | None = None) -> str:
    """Tcl for N flows; with ``sample_s`` every flow's cwnd_ is printed at
    that period ("cwnd <i> <t> <packets>"). ``extra`` adds Tcl settings;
    ``queue`` is the bottleneck's ns-2 queue class (``queue_settings``, Tcl
    run before the link is made) and with ``queue_sample_s`` its ``ave_``
    (RED's average) is printed at that period ("q <t> <ave>")."""
    agent, sink = AGENTS[flavor]
    return _TCL.format(n=n, duration=duration_s, agent=agent, sink=sink, window=window, iw=iw, extra=extra,
                       sample=sample_s or 1.0, sampling='$ns at 0.0 "sample"' if sample_s else "",
                       queue=queue, queue_settings=queue_settings, queue_sample=queue_sample_s or 1.0,
                       queue_sampling='$ns at 0.0 "sample_queue"' if queue_sample_s else "")


def parse(stdout: str) -> dict:
    """Figures printed by the script."""
    out: dict = {"cwnd": {}, "acked": {}, "ave": []}
    for line in stdout.splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "cwnd":
            out["cwnd"].setdefault(int(p[1]), []).append((float(p[2]), float(p[3])))
        elif p[0] == "acked":
            out["acked"][int(p[1])] = int(p[2])
        elif p[0] == "q":
            out["ave"].append((float(p[1]), float(p[2])))
        elif p[0] in ("bdepartures", "pdepartures", "pdrops", "parrivals"):
            out[p[0]] = int(p[1])
    return out

"""`mediasim bench --calls --profile`: a media packet's wall time by part
of the simulator, sampled by Linux perf.

scripts/setup installs perf (Debian's linux-perf) where it can (root with
apt-get). In CI the end-to-end test requires it; elsewhere, without perf,
it is reported as not run, with the reason, never passed."""


import pytest
from click.testing import CliRunner
from conftest import bench_calls_quick, require_tool

from mediasim.cli import main
from mediasim.validation.wall_profile import (ENGINE_PARTS, PART_NAMES, Profile, parse_perf_report, part_of,
                                              per_media_packet_us, run_profiles)

# Lines as `perf report --no-children --sort dso,symbol -F sample,dso,sym
# -t ';' --stdio` prints them (header, padding and the IPC column kept).
REPORT = """# To display the perf.data header info, please use --header/--header-only options.
#
# Samples: 6K of event 'cpu-clock'
#
#      Samples;Shared Object                                    ;Symbol     ;IPC   [IPC Coverage]
 2          ;[kernel.kallsyms]                                ;[k] ___slab_alloc       ;-      -
 1148       ;_engine.abi3.so                                  ;[.] mediasim_engine::world::World::run_until   ;-      -
 93         ;_engine.abi3.so                                  ;[.] core::slice::sort::unstable::quicksort::quicksort ;-  -
            ---core::slice::sort::unstable::quicksort::quicksort
 125        ;_engine.abi3.so                                  ;[.] mediasim_engine::app::rtp::viewer::FeedbackOut::send ;-  -
 94         ;_engine.abi3.so                                  ;[.] mediasim_engine::app::rtp::member::RtpMember::on_control ;-  -
 478        ;_engine.abi3.so                                  ;[.] mediasim_engine::proto::rtp::avpf::RtcpScheduler::run_quiet_slots ;-  -
 334        ;_engine.abi3.so                                  ;[.] mediasim_engine::app::media::playout::Playout::on_packet ;-  -
 221        ;_engine.abi3.so                                  ;[.] <mediasim_engine::app::rtp::member::RtpMember as mediasim_engine::app::App>::on_packet ;- -
 383        ;_engine.abi3.so                                  ;[.] mediasim_engine::app::rtp::member::RtpMember::pace ;-  -
 145        ;_engine.abi3.so                                  ;[.] mediasim_engine::net::payload::Payload::reuse ;-  -
 106        ;libc.so.6                                        ;[.] __memmove_avx512_unaligned_erms ;-  -
 52         ;python3.11                                       ;[.] _PyEval_EvalFrameDefault ;-  -
"""


def test_each_sample_goes_to_the_first_part_whose_pattern_its_function_matches():
    parts = parse_perf_report(REPORT)
    assert parts == {"feedback": 125 + 94, "rtcp": 478, "receiver": 334 + 221, "sender": 383 + 145,
                     "network": 1148 + 93, "libc": 106, "outside": 2 + 52}
    # The feedback message's making lives beside the viewer's code but is
    # feedback's; a member's timer is the sender's; the standard library's
    # generic code in the engine counts with the event loop.
    assert part_of("_engine.abi3.so", "mediasim_engine::app::rtp::viewer::FeedbackOut::send") == "feedback"
    assert part_of("_engine.abi3.so", "mediasim_engine::app::rtp::viewer::Viewer::stats") == "receiver"
    assert part_of("_engine.abi3.so",
                   "<mediasim_engine::app::rtp::member::RtpMember as mediasim_engine::app::App>::on_timer") == "sender"
    assert part_of("_engine.abi3.so", "mediasim_engine::app::cbr::CbrSource::emit") == "sender"
    assert part_of("_engine.abi3.so", "mediasim_engine::measure::delay::DelayStats::add") == "receiver"
    assert part_of("_engine.abi3.so", "mediasim_engine::sim::heap::Lane<T>::pop_long") == "network"
    assert part_of("libc.so.6", "malloc") == "libc" and part_of("[kernel.kallsyms]", "x") == "outside"
    assert PART_NAMES[-1] == "outside" and "outside" not in ENGINE_PARTS
    with pytest.raises(ValueError, match="not a perf report line"):
        parse_perf_report(" 12 ;only two\n")


def test_a_packet_costs_the_difference_over_the_packets_between():
    def samples(k: int) -> dict[str, int]:
        return {p: (i + 1) * k for i, p in enumerate(PART_NAMES)}

    short, long = Profile(samples(10), 1_000), Profile(samples(30), 5_000)
    per = per_media_packet_us(short, long, period_ns=250_000)
    # "feedback" is part 1: 20 more samples of 250 us over 4,000 packets.
    assert per["feedback"] == pytest.approx(20 * 250 / 4_000)
    assert per["outside"] == pytest.approx(len(PART_NAMES) * 20 * 250 / 4_000)
    with pytest.raises(ValueError, match="no more media packets"):
        per_media_packet_us(long, long)
    # Refused before anything runs.
    with pytest.raises(ValueError, match="unknown workload 'nope'"):
        run_profiles(["nope"], 8, (1.0, 2.0))
    with pytest.raises(ValueError, match="expected 0 < shorter < longer"):
        run_profiles(["calls"], 8, (2.0, 1.0))


def test_profile_goes_with_calls_and_not_with_counts():
    r = CliRunner().invoke(main, ["bench", "--profile"])
    assert r.exit_code != 0 and "--profile goes with --calls" in r.output
    r = CliRunner().invoke(main, ["bench", "--calls", "--profile", "--counts"])
    assert r.exit_code != 0 and "--counts and --profile: choose one" in r.output


def test_bench_calls_profile_quick_puts_each_workload_s_time_in_its_parts():
    require_tool("perf")
    calls, rtp, cbr = bench_calls_quick("--profile")
    assert rtp["media_packets"] == cbr["media_packets"] > 8 * 50 * 190
    for row in (calls, rtp, cbr):
        assert row["total_us"] == pytest.approx(sum(row[f"{p}_us"] for p in ENGINE_PARTS), abs=1e-3)
    # CBR flows run no RTCP or feedback code; the RTP session runs RTCP
    # but sends no per-packet feedback; the calls run both.
    assert cbr["rtcp_us"] == 0 and cbr["feedback_us"] == 0
    assert rtp["rtcp_us"] > 0 and calls["rtcp_us"] > 0 and calls["feedback_us"] > rtp["feedback_us"]
    # Which workload costs most per packet is the benchmark's to show, not
    # a test's: load on the machine moves the figures.
    assert min(calls["total_us"], rtp["total_us"], cbr["total_us"]) > 0 and cbr["total_x_cbr"] == 1.0

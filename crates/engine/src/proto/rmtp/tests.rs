//! RMTP state machines alone: bitmaps and their aggregation, final-buffer
//! eviction, the window rules, premature retransmissions.

use super::*;
use crate::sim::SimTime;
use std::collections::BTreeSet;

fn t(ms: u64) -> SimTime {
    SimTime::from_millis(ms)
}

fn report_of(seqs: &[u64]) -> HackReport {
    let mut s = SeqSet::default();
    for &x in seqs {
        s.insert(x);
    }
    s.report()
}

#[test]
fn seqset_tracks_prefix_gaps_and_forgets_full_words() {
    let mut s = SeqSet::default();
    for x in (0..300).filter(|x| x % 100 != 7) {
        assert!(s.insert(x));
    }
    assert!(!s.insert(5), "duplicate");
    assert_eq!(s.prefix(), 7);
    assert_eq!(s.end(), 300);
    assert_eq!(s.missing().collect::<Vec<_>>(), vec![7, 107, 207]);
    s.insert(7);
    s.insert(107);
    assert_eq!(s.prefix(), 207);
    // Words wholly below the prefix are dropped: 207 / 64 = word 3.
    assert_eq!(s.first_word_for_test(), 3);
    assert!(s.contains(0) && s.contains(206) && !s.contains(207) && s.contains(299));
    assert!(!s.contains(300));
}

#[test]
fn seqset_agrees_with_a_plain_set_on_random_inserts() {
    let mut rng = crate::sim::RngStreams::new(7, 0).stream("seqset");
    let mut s = SeqSet::default();
    let mut plain = BTreeSet::new();
    for _ in 0..5000 {
        let x = (crate::sim::uniform(&mut rng) * 2000.0) as u64;
        assert_eq!(s.insert(x), plain.insert(x));
    }
    for x in 0..2100 {
        assert_eq!(s.contains(x), plain.contains(&x), "{x}");
    }
    let prefix = (0..).find(|x| !plain.contains(x)).unwrap();
    assert_eq!(s.prefix(), prefix);
    let r = s.report();
    for x in 0..2100 {
        assert_eq!(r.has(x), plain.contains(&x), "{x}");
    }
}

#[test]
fn hack_report_wire_size_counts_one_bit_per_number() {
    let r = report_of(&[0, 1, 2, 4, 20]);
    assert_eq!((r.base, r.end), (3, 21));
    assert_eq!(
        r.missing().collect::<Vec<_>>(),
        (3..20).filter(|&x| x != 4).collect::<Vec<_>>()
    );
    // 18 numbers in [3, 21): 3 bytes of bitmap after the 16-byte header.
    assert_eq!(seqset::hack_payload_bytes(&r), 19);
    assert_eq!(seqset::hack_payload_bytes(&report_of(&[0, 1])), 16);
}

#[test]
fn receiver_delivers_in_order_with_first_transmission_delays() {
    let mut r = RmtpReceiver::default();
    assert_eq!(r.on_data(t(100), 0, t(0), false), 1);
    assert_eq!(r.on_data(t(200), 2, t(100), false), 0);
    assert_eq!(
        (r.waiting(), r.end()),
        (1, 3),
        "one past the highest received"
    );
    // 1 arrives as a retransmission at 500 ms: 1 and 2 are delivered.
    assert_eq!(r.on_data(t(500), 1, t(50), true), 2);
    assert_eq!(r.on_data(t(600), 1, t(50), true), 0);
    assert_eq!((r.delivered, r.duplicates, r.recovered), (3, 1, 1));
    // Delays 0.1 + 0.45 + 0.4.
    assert!((r.delay_sum_s - 0.95).abs() < 1e-9);
}

#[test]
fn dr_repairs_what_children_miss_and_frees_what_all_have() {
    let mut dr = RmtpDr::new(2, 500, t(1000), t(5000));
    for s in 0..5 {
        dr.on_data(t(s * 10), s, t(s * 10), false);
    }
    assert_eq!(dr.buffered(), 5);
    dr.on_child_hack(t(0), 0, report_of(&[0, 1, 3, 4]));
    dr.on_child_hack(t(0), 1, report_of(&[0, 1, 2, 4]));
    let repairs: Vec<u64> = dr.repair_round(t(100)).iter().map(|x| x.0).collect();
    assert_eq!(repairs, vec![2, 3]);
    assert_eq!(dr.local_retx, 2);
    // 0, 1 and 4 are held by both children: freed.
    assert_eq!(dr.buffered(), 2);
    // Nothing asked since: the next round sends nothing.
    assert!(dr.repair_round(t(400)).is_empty());
    // The DR holds 2 and 3, so it answers for them towards the sender.
    assert_eq!(dr.report(), report_of(&[0, 1, 2, 3, 4]));
}

#[test]
fn dr_final_buffer_overflow_leaves_repairs_to_the_sender() {
    let mut dr = RmtpDr::new(1, 3, t(1000), t(5000));
    for s in 0..6 {
        dr.on_data(t(s), s, t(s), false);
    }
    assert_eq!((dr.buffered(), dr.overflows), (3, 3));
    // The child misses 1 (held) and 4 (did not fit).
    dr.on_child_hack(t(0), 0, report_of(&[0, 2, 3, 5]));
    let repairs: Vec<u64> = dr.repair_round(t(100)).iter().map(|x| x.0).collect();
    assert_eq!(repairs, vec![1]);
    let r = dr.report();
    assert!(r.has(1) && r.has(3) && !r.has(4), "{r:?}");
    assert_eq!(r.missing().collect::<Vec<_>>(), vec![4]);
}

/// Both ways a repair round finds what to send (through the requests when
/// they are fewer than the packets held, else through the buffer) send
/// what the children asked for and the DR holds, in order, once.
#[test]
fn dr_repairs_the_requested_packets_it_holds_whichever_is_fewer() {
    let mut rng = crate::sim::RngStreams::new(3, 0).stream("dr_rounds");
    let mut u = || crate::sim::uniform(&mut rng);
    for case in 0..200 {
        let capacity = [4, 40, 400][case % 3];
        let mut dr = RmtpDr::new(3, capacity, t(1000), t(5000));
        let got: Vec<u64> = (0..300).filter(|_| u() < 0.8).collect();
        for &s in &got {
            dr.on_data(t(1), s, t(0), false);
        }
        let held: BTreeSet<u64> = got.iter().copied().take(capacity).collect();
        let mut asked = BTreeSet::new();
        for child in 0..3 {
            let miss = [0.02, 0.5][case % 2];
            let has: Vec<u64> = (0..300).filter(|_| u() >= miss).collect();
            let r = report_of(&has);
            asked.extend(r.missing());
            dr.on_child_hack(t(2), child, r);
        }
        let want: Vec<u64> = asked.intersection(&held).copied().collect();
        let repairs: Vec<u64> = dr.repair_round(t(100)).iter().map(|x| x.0).collect();
        assert_eq!(repairs, want, "case {case}");
    }
}

#[test]
fn dr_acknowledges_only_what_it_holds_or_every_child_has() {
    let mut dr = RmtpDr::new(1, 0, t(1000), t(5000)); // holds nothing
    for s in [0, 1, 2, 4] {
        dr.on_data(t(s), s, t(s), false);
    }
    dr.on_child_hack(t(0), 0, report_of(&[0, 2]));
    let r = dr.report();
    // Own loss 3; the child's 1 cannot be repaired locally; 4 is neither
    // held nor known to be at the child.
    assert_eq!(r.missing().collect::<Vec<_>>(), vec![1, 3, 4]);
    assert_eq!(r.base, 1);
}

/// The study's DRs: the HACK aggregates the subgroup's, so what a child
/// still misses stays unacknowledged even while the DR holds it (and will
/// repair it), and the DR's own loss is reported like a child's.
#[test]
fn a_subgroup_dr_acknowledges_only_what_every_child_has() {
    let mut dr = RmtpDr::new(2, 500, t(1000), t(5000));
    dr.ack_subgroup = true;
    for s in [0, 1, 2, 4, 5] {
        dr.on_data(t(s), s, t(s), false);
    }
    dr.on_child_hack(t(0), 0, report_of(&[0, 1, 2, 3, 4, 5]));
    dr.on_child_hack(t(0), 1, report_of(&[0, 2, 3, 4]));
    let r = dr.report();
    // 1: child 1 misses it (the DR holds it); 3: the DR's own loss; 5:
    // not yet at child 1.
    assert_eq!(r.missing().collect::<Vec<_>>(), vec![1, 3, 5]);
    assert_eq!((r.base, r.end), (1, 6));
    // The custodial DR answers for 1 and 5, which it holds.
    dr.ack_subgroup = false;
    assert_eq!(dr.report().missing().collect::<Vec<_>>(), vec![3]);
}

/// Without a hold-off every round repairs what was asked since the last
/// one, even a packet repaired the round before (its repair may still be
/// on its way): the study's DRs count more repairs than losses.
#[test]
fn without_a_holdoff_every_round_repairs_what_was_asked_again() {
    let mut dr = RmtpDr::new(1, 500, SimTime::ZERO, t(5000));
    for s in 0..3 {
        dr.on_data(t(s), s, t(s), false);
    }
    for round in 1..=3 {
        dr.on_child_hack(t(300 * round - 1), 0, report_of(&[0, 2]));
        assert_eq!(dr.repair_round(t(300 * round)), vec![(1, t(1))]);
    }
    assert_eq!(dr.local_retx, 3);
    // Not asked this round: nothing.
    assert!(dr.repair_round(t(1200)).is_empty());
}

fn cfg() -> RmtpConfig {
    RmtpConfig::default()
}

#[test]
fn window_opens_by_one_per_interval_up_to_ws() {
    let mut s = RmtpSender::new(cfg(), 1);
    let sizes: Vec<usize> = (0..12).map(|i| s.on_interval(t(2000 * i)).len()).collect();
    assert_eq!(sizes, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10]);
    assert_eq!(
        s.sent(),
        sizes.iter().sum::<usize>() as u64,
        "new packets sent"
    );
    let mut d = RmtpSender::new(
        RmtpConfig {
            doubling: true,
            ..cfg()
        },
        1,
    );
    let sizes: Vec<usize> = (0..6).map(|i| d.on_interval(t(2000 * i)).len()).collect();
    assert_eq!(sizes, vec![1, 2, 4, 8, 10, 10]);
}

/// A sender at window 10 with 40 packets sent, then a HACK reporting
/// `lost` of them missing.
fn after_losses(lost: u64) -> RmtpSender {
    let mut s = RmtpSender::new(
        RmtpConfig {
            initial_window: 10,
            ..cfg()
        },
        1,
    );
    for i in 0..4 {
        s.on_interval(t(2000 * i));
    }
    let got: Vec<u64> = (lost..40).collect();
    s.on_hack(0, report_of(&got));
    s
}

#[test]
fn window_rules_at_their_thresholds() {
    // nb_lost = distinct packets reported missing since the last interval.
    for (lost, cwnd) in [(20, 10), (21, 5), (30, 5), (31, 1)] {
        let mut s = after_losses(lost);
        s.on_interval(t(8000));
        assert_eq!(s.cwnd, cwnd, "lost {lost}");
    }
}

#[test]
fn retransmissions_go_first_and_use_window_slots() {
    let mut s = after_losses(3);
    assert_eq!(s.retx_queued(), 3, "the HACK's missing packets wait");
    let out = s.on_interval(t(8000));
    let seqs: Vec<(u64, bool)> = out.iter().map(|x| (x.seq, x.retx)).collect();
    assert_eq!(&seqs[..4], &[(0, true), (1, true), (2, true), (40, false)]);
    assert_eq!(out.len(), 10);
    assert_eq!(out[0].first_sent, t(0));
    assert_eq!((s.retx_sent, s.premature_retx), (3, 0));
}

#[test]
fn uncovered_packets_are_retransmitted_and_counted_as_premature() {
    let mut s = RmtpSender::new(
        RmtpConfig {
            initial_window: 5,
            ..cfg()
        },
        2,
    );
    s.on_interval(t(0)); // 0..5
                         // DR 0 has seen 0..3 only: 3 and 4 are not covered.
    s.on_hack(0, report_of(&[0, 1, 2]));
    let out = s.on_interval(t(2000));
    let retx: Vec<u64> = out.iter().filter(|x| x.retx).map(|x| x.seq).collect();
    assert_eq!(retx, vec![3, 4]);
    assert_eq!(s.premature_retx, 2);
    // Not counted as lost: the window still opened.
    assert_eq!(s.cwnd, 6);
}

#[test]
fn final_buffer_frees_what_every_dr_has_and_skips_freed_retransmissions() {
    let mut s = RmtpSender::new(
        RmtpConfig {
            initial_window: 4,
            ..cfg()
        },
        2,
    );
    s.on_interval(t(0)); // 0..4
    s.on_hack(0, report_of(&[0, 1, 3]));
    assert_eq!(s.final_buffer_len(), 4);
    s.on_hack(1, report_of(&[0, 1, 2, 3]));
    // 0, 1 and 3 are held by both DRs.
    assert_eq!(s.final_buffer_len(), 1);
    // DR 0 gets 2 before the next interval: the queued retransmission is dropped.
    s.on_hack(0, report_of(&[0, 1, 2, 3]));
    assert_eq!(s.final_buffer_len(), 0);
    let out = s.on_interval(t(2000));
    assert!(out.iter().all(|x| !x.retx));
    assert_eq!(s.retx_sent, 0);
}

#[test]
fn an_uncovered_packet_later_reported_missing_is_not_premature() {
    let mut s = RmtpSender::new(
        RmtpConfig {
            initial_window: 3,
            ..cfg()
        },
        2,
    );
    s.on_interval(t(0)); // 0..3
    s.on_hack(0, report_of(&[0])); // 1, 2 uncovered
    s.on_hack(1, report_of(&[0, 2])); // 1 missing at DR 1
    let out = s.on_interval(t(2000));
    assert_eq!(
        out.iter()
            .filter(|x| x.retx)
            .map(|x| x.seq)
            .collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!((s.retx_sent, s.premature_retx), (2, 1));
}

#[test]
fn dr_does_not_repair_a_packet_again_within_the_holdoff() {
    let mut dr = RmtpDr::new(1, 500, t(1000), t(5000));
    for s in 0..3 {
        dr.on_data(t(s), s, t(s), false);
    }
    let asks = |dr: &mut RmtpDr| dr.on_child_hack(t(0), 0, report_of(&[0, 2]));
    asks(&mut dr);
    assert_eq!(dr.repair_round(t(300)).len(), 1);
    // The child asks again before the repair reached it: held off.
    asks(&mut dr);
    assert!(dr.repair_round(t(600)).is_empty());
    asks(&mut dr);
    assert!(dr.repair_round(t(1299)).is_empty());
    // Asked again after the hold-off: repaired again.
    asks(&mut dr);
    assert_eq!(dr.repair_round(t(1300)), vec![(1, t(1))]);
    assert_eq!(dr.local_retx, 2);
}

#[test]
fn dr_repairs_a_lost_tail_once_the_stream_has_stopped() {
    let mut dr = RmtpDr::new(1, 500, t(1000), t(1000));
    for s in 0..3 {
        dr.on_data(t(100 * s), s, t(100 * s), false);
    }
    // The child has 0 and 1; nothing after 2 reveals that 2 is missing.
    dr.on_child_hack(t(900), 0, report_of(&[0, 1]));
    assert!(
        dr.repair_round(t(900)).is_empty(),
        "the last packet came 0.7 s ago"
    );
    dr.on_child_hack(t(1250), 0, report_of(&[0, 1]));
    assert_eq!(dr.repair_round(t(1250)), vec![(2, t(200))]);
}

/// A report's word of membership bits agrees with `has` at every offset,
/// below its base, inside it and past its end.
#[test]
fn report_words_agree_with_has() {
    let mut rng = crate::sim::RngStreams::new(5, 0).stream("words");
    let mut u = || crate::sim::uniform(&mut rng);
    for case in 0..100 {
        let keep = [0.3, 0.9, 0.999][case % 3];
        let got: Vec<u64> = (0..300).filter(|_| u() < keep).collect();
        let r = report_of(&got);
        for pos in [0, 1, 63, 64, 65, 100, 127, 200, 290, 299, 300, 400] {
            let w = r.bits_from(pos);
            for j in 0..64 {
                assert_eq!(
                    w >> j & 1 == 1,
                    r.has(pos + j),
                    "case {case} pos {pos} bit {j}"
                );
            }
        }
    }
}

/// The subgroup DR's report, built a word at a time, is the report of
/// "the DR and every child have it", packet by packet.
#[test]
fn a_subgroup_report_is_what_the_dr_and_every_child_have() {
    let mut rng = crate::sim::RngStreams::new(6, 0).stream("subgroup");
    let mut u = || crate::sim::uniform(&mut rng);
    for case in 0..100 {
        let mut dr = RmtpDr::new(3, 500, SimTime::ZERO, t(5000));
        dr.ack_subgroup = true;
        let miss = [0.01, 0.2][case % 2];
        let own: Vec<u64> = (0..250).filter(|_| u() >= miss).collect();
        for &s in &own {
            dr.on_data(t(1), s, t(0), false);
        }
        let mut kids = Vec::new();
        for child in 0..3 {
            let upto = 100 + (u() * 200.0) as u64;
            let has: Vec<u64> = (0..upto).filter(|_| u() >= miss).collect();
            let r = report_of(&has);
            dr.on_child_hack(t(2), child, r.clone());
            kids.push(r);
        }
        let lo = (kids.iter().map(|k| k.base).min().unwrap()).min(dr.rx.received().prefix());
        let want = HackReport::from_fn(lo, dr.rx.received().end(), |s| {
            own.contains(&s) && kids.iter().all(|k| k.has(s))
        });
        assert_eq!(dr.report(), want, "case {case}");
    }
}

/// A late copy of a packet the DR already has does not make the stream
/// look alive: the tail rule still starts `tail_after` after the last new
/// packet.
#[test]
fn a_duplicate_does_not_postpone_the_tail_rule() {
    let mut dr = RmtpDr::new(1, 500, SimTime::ZERO, t(5000));
    for s in 0..3 {
        dr.on_data(t(s), s, t(s), false);
    }
    // A repair of 1 from above arrives long after the stream stopped.
    dr.on_data(t(9000), 1, t(1), true);
    // The child has only 0 (its HACK covers nothing above it): 7 s after
    // the last new packet the held 1 and 2 count as missing.
    dr.on_child_hack(t(7002), 0, report_of(&[0]));
    let repairs: Vec<u64> = dr.repair_round(t(7100)).iter().map(|x| x.0).collect();
    assert_eq!(repairs, vec![1, 2]);
}

/// A packet every child already has is not stored, and a second copy of
/// a held packet keeps the first copy's repair record.
#[test]
fn the_final_buffer_keeps_only_what_some_child_may_need_once() {
    let mut dr = RmtpDr::new(1, 500, t(1000), t(5000));
    dr.on_child_hack(t(0), 0, report_of(&[0, 1, 2, 3]));
    dr.on_data(t(10), 2, t(0), false);
    assert_eq!(dr.buffered(), 0, "the child has 2 already");
    dr.on_data(t(20), 5, t(5), false);
    dr.on_child_hack(t(30), 0, report_of(&[0, 1, 2, 3, 4, 6]));
    assert_eq!(dr.repair_round(t(40)).len(), 1, "5 repaired");
    // Another copy of 5 arrives; the child asks again within the hold-off.
    dr.on_data(t(50), 5, t(5), true);
    dr.on_child_hack(t(60), 0, report_of(&[0, 1, 2, 3, 4, 6]));
    assert!(
        dr.repair_round(t(100)).is_empty(),
        "held off: the copy kept its record"
    );
    assert_eq!(dr.buffered(), 1);
}

/// A report covers the numbers below its end, and keeps no membership
/// bit at or beyond it: 0-4 missing and 5-9 present of 10 numbers give
/// the word 0b11111_00000 (0x3E0), whatever the word holds above.
#[test]
fn a_report_covers_and_holds_only_what_lies_below_its_end() {
    let r = HackReport::from_words(0, 10, |p| if p == 0 { !0x1F } else { u64::MAX });
    assert_eq!((r.base, r.end, r.bits.clone()), (0, 10, vec![0x3E0]));
    assert!(r.covers(9) && !r.covers(10));
    // 0-69 present: the report starts at the first missing number, 70.
    let r = HackReport::from_words(0, 200, |p| match p {
        0 => u64::MAX,
        64 => 0x3F,
        _ => 0,
    });
    assert_eq!(r.base, 70);
    assert_eq!(r.missing().next(), Some(70));
}

/// A set whose report spans exactly one word (numbers 1-64 after 0)
/// keeps that word's bits: 1 missing, 2-64 present.
#[test]
fn a_report_of_exactly_one_word_keeps_its_bits() {
    let r = report_of(&(0..=64).filter(|&s| s != 1).collect::<Vec<_>>());
    assert_eq!((r.base, r.end), (1, 65));
    assert_eq!(r.bits, vec![!1u64]);
}

#[test]
fn a_receiver_has_what_arrived_and_nothing_else() {
    let mut r = RmtpReceiver::default();
    r.on_data(t(10), 0, t(0), false);
    r.on_data(t(12), 2, t(2), false);
    assert!(r.has(0) && r.has(2));
    assert!(!r.has(1) && !r.has(3));
}

//! Media scaling's receiver-driven control behind the rate-controller
//! seam: the receiver half picks one of the media's discrete levels
//! ("scales") from the losses it sees and asks the sender for it in a
//! [`ScaleRequest`]; the sender half switches as soon as a request
//! arrives, echoes the request's send time for the receiver's RTT, and
//! reports the level (`RateController::level`) and its rate as the target.
//!
//! The control ([`ScaleControl`], the media-scaling study's):
//! - A loss is a data packet with a sequence number above the one expected
//!   (a frame sent as several packets counts as lost when any of them is),
//!   or no packet for the time-out.
//! - On a loss the scale is halved (integer division). Losses within one
//!   control RTT of a decrease belong to the same congestion (the packets
//!   were sent at the old rate) and are not acted on (`holdoff`).
//! - After one control RTT without loss since the last checkpoint (the
//!   last scale change, or the last loss acted on), the scale rises by one.
//! - The control RTT is max(measured RTT, longest frame interval): the
//!   study's text breaks off at "the Round Trip Time (RTT) of the
//!   connection is greater than the longest possible frame transmission
//!   interval"; this is our reading of it. The time-out is
//!   `timeout_factor` control RTTs (queueing jitter alone would trip a
//!   time-out of exactly one frame interval).
//! - The RTT is measured from the sender's echo of the last request's send
//!   time minus the time the sender held it ([`Echo`]), smoothed with gain
//!   1/8; until a first sample the control RTT is the longest frame
//!   interval.
//!
//! Paced by itself (a `paced` flow), the sender half sends one packet per
//! its size at the level's rate, as MM_APP does; a media-scaling flow's
//! frames are clocked by the media instead (`app::scaling`).

use super::{CcMedia, CcModel, CcSite, Departure, Echo, FeedbackReceiver, RateController, Stamp};
use crate::net::{AppPayload, Payload};
use crate::scenario::check::Checker;
use crate::sim::{Series, SimTime};
use schemars::JsonSchema;
use serde::Deserialize;

/// A receiver's request for a scale, stamped with its send time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleRequest {
    pub scale: u8,
    pub sent_at: SimTime,
}

impl AppPayload for ScaleRequest {
    crate::payload_eq!();
}

fn d_timeout_factor() -> f64 {
    1.5
}
fn d_true() -> bool {
    true
}

/// The media-scaling study's five-scale control: `{type = "scale"}`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScaleCcSpec {
    /// The rate of each level on the wire, bit/s, lowest first (default:
    /// the media's own levels; required for media without levels).
    #[serde(default)]
    pub levels_bps: Option<Vec<f64>>,
    /// The level the flow starts at (default 0).
    #[serde(default)]
    pub initial_level: u8,
    /// The floor of the control RTT (default: the media's longest frame
    /// interval, or one packet's time at the lowest level).
    #[serde(default)]
    pub longest_interval_ms: Option<f64>,
    /// Time-out in control RTTs (default 1.5).
    #[serde(default = "d_timeout_factor")]
    pub timeout_factor: f64,
    /// Losses within a control RTT of a decrease do not halve again
    /// (default true).
    #[serde(default = "d_true")]
    pub holdoff: bool,
}

impl Default for ScaleCcSpec {
    fn default() -> Self {
        ScaleCcSpec {
            levels_bps: None,
            initial_level: 0,
            longest_interval_ms: None,
            timeout_factor: d_timeout_factor(),
            holdoff: true,
        }
    }
}

/// Levels a control can address: a scale is a u8.
const MAX_LEVELS: usize = 256;

impl CcModel for ScaleCcSpec {
    fn validate(&self, path: &str, media: CcMedia, c: &mut Checker) {
        let levels = match &self.levels_bps {
            Some(v) => {
                if v.is_empty() || v.len() > MAX_LEVELS {
                    let msg = format!("give 1 to {MAX_LEVELS} levels (got {})", v.len());
                    c.err(format!("{path}.levels_bps"), msg);
                }
                for (i, r) in v.iter().enumerate() {
                    c.positive(format_args!("{path}.levels_bps[{i}]"), *r);
                }
                v.len()
            }
            None if media.levels == 0 => {
                let msg = "required: this flow's media has no levels of its own";
                c.err(format!("{path}.levels_bps"), msg);
                0
            }
            None => media.levels,
        };
        if levels > 0 && self.initial_level as usize >= levels {
            let msg = format!("must be 0..={} (got {})", levels - 1, self.initial_level);
            c.err(format!("{path}.initial_level"), msg);
        }
        if let Some(x) = self.longest_interval_ms {
            c.positive(format_args!("{path}.longest_interval_ms"), x);
        }
        if !(self.timeout_factor.is_finite() && self.timeout_factor >= 1.0) {
            let msg = format!("must be at least 1 (got {})", self.timeout_factor);
            c.err(format!("{path}.timeout_factor"), msg);
        }
    }

    fn build(&self, site: &CcSite<'_>) -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>) {
        let levels = self
            .levels_bps
            .clone()
            .unwrap_or_else(|| site.levels_bps.to_vec());
        let slowest = levels.iter().copied().fold(f64::INFINITY, f64::min);
        let longest = match (self.longest_interval_ms, site.longest_interval) {
            (Some(ms), _) => SimTime::from_millis_f64(ms),
            (None, Some(t)) => t,
            (None, None) => packet_time(site.packet_bytes, slowest),
        };
        let control = ScaleControl::new(ControlConfig {
            longest_interval: longest,
            timeout_factor: self.timeout_factor,
            holdoff: self.holdoff,
            initial_scale: self.initial_level,
            max_scale: (levels.len() - 1) as u8,
        });
        let tx = ScaleSender {
            level: self.initial_level as usize,
            levels,
            last_request: None,
            last_sent: None,
            sent: 0,
            series: Series::default(),
        };
        let rx = ScaleReceiver {
            control,
            series: Series::default(),
        };
        (Box::new(tx), Box::new(rx))
    }
}

/// The time `bytes` take at `rate_bps`.
fn packet_time(bytes: u32, rate_bps: f64) -> SimTime {
    SimTime::from_secs_f64(bytes as f64 * 8.0 / rate_bps)
}

/// The sending half: holds the requested level.
pub struct ScaleSender {
    levels: Vec<f64>,
    level: usize,
    /// The last request: its send time and when it arrived.
    last_request: Option<(SimTime, SimTime)>,
    /// The last packet: when it left and its size.
    last_sent: Option<(SimTime, u32)>,
    sent: u64,
    series: Series,
}

impl RateController for ScaleSender {
    fn start(&mut self, now: SimTime, series_rows: usize) {
        self.series.set_rows(series_rows);
        self.series.push(now, self.target_bps());
    }
    fn on_send(&mut self, now: SimTime, d: Departure) -> (Stamp, SimTime) {
        let stamp = Stamp {
            seq: self.sent,
            sent_at: now,
            echo: (self.last_request).map(|(sent_at, at)| Echo {
                sent_at,
                held: now.saturating_sub(at),
            }),
            ..Stamp::default()
        };
        self.sent += 1;
        self.last_sent = Some((now, d.bytes));
        (
            stamp,
            now.max(d.due) + packet_time(d.bytes, self.target_bps()),
        )
    }
    fn on_feedback(&mut self, now: SimTime, fb: &Payload, next: SimTime) -> Option<SimTime> {
        let &ScaleRequest { scale, sent_at } = fb.get()?;
        self.last_request = Some((sent_at, now));
        let level = (scale as usize).min(self.levels.len() - 1);
        if level == self.level {
            return Some(next);
        }
        self.level = level;
        self.series.push(now, self.target_bps());
        // The next packet one packet time at the new rate after the last.
        Some(match self.last_sent {
            Some((at, bytes)) => (at + packet_time(bytes, self.target_bps())).max(now),
            None => next,
        })
    }
    fn target_bps(&self) -> f64 {
        self.levels[self.level]
    }
    fn level(&self) -> Option<usize> {
        Some(self.level)
    }
    fn packets(&self) -> u64 {
        self.sent
    }
    fn rate_series(&self) -> Vec<(SimTime, f64)> {
        self.series.points().to_vec()
    }
}

/// The receiving half: runs the control and requests each new scale.
pub struct ScaleReceiver {
    control: ScaleControl,
    /// The requested scale over time.
    series: Series,
}

impl ScaleReceiver {
    fn request(&mut self, now: SimTime, scale: u8, out: &mut Vec<Payload>) {
        out.push(Payload::new(ScaleRequest {
            scale,
            sent_at: now,
        }));
        self.series.push(now, scale as f64);
    }
}

impl FeedbackReceiver for ScaleReceiver {
    fn start(&mut self, now: SimTime) {
        self.control.start(now);
        self.series.push(now, self.control.scale() as f64);
    }
    fn on_data(&mut self, now: SimTime, stamp: &Stamp, _bytes: u32, out: &mut Vec<Payload>) {
        if let Some(e) = stamp.echo {
            let rtt = now.saturating_sub(e.sent_at).saturating_sub(e.held);
            self.control.rtt_sample(rtt);
        }
        if let Some(s) = self.control.on_packet(now, stamp.seq) {
            self.request(now, s, out);
        }
    }
    fn deadline(&self) -> Option<SimTime> {
        self.control.deadline()
    }
    fn on_timer(&mut self, now: SimTime, out: &mut Vec<Payload>) {
        if let Some(s) = self.control.on_timer(now) {
            self.request(now, s, out);
        }
    }
    fn set_series_rows(&mut self, rows: usize) {
        self.series.set_rows(rows);
    }
    fn value(&self, name: &str) -> Option<f64> {
        let c = &self.control.counts;
        Some(match name {
            "missing_packets" => c.missing_packets as f64,
            "loss_indications" => c.loss_indications as f64,
            "timeouts" => c.timeouts as f64,
            "decreases" => c.decreases as f64,
            "increases" => c.increases as f64,
            "srtt_ms" => self
                .control
                .srtt()
                .map_or(f64::NAN, |t| t.as_secs_f64() * 1e3),
            "control_rtt_ms" => self.control.control_rtt().as_secs_f64() * 1e3,
            _ => return None,
        })
    }
    fn series(&self, name: &str) -> Option<Vec<(SimTime, f64)>> {
        (name == "requested_scale").then(|| self.series.points().to_vec())
    }
}

#[derive(Clone, Debug)]
pub struct ControlConfig {
    pub longest_interval: SimTime,
    pub timeout_factor: f64,
    pub holdoff: bool,
    pub initial_scale: u8,
    /// The highest scale (the media's levels less one).
    pub max_scale: u8,
}

/// Counters reported at the end of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ControlCounts {
    /// Packets found missing from sequence gaps.
    pub missing_packets: u64,
    /// Loss indications (gaps and time-outs), acted on or not.
    pub loss_indications: u64,
    pub timeouts: u64,
    pub decreases: u64,
    pub increases: u64,
}

#[derive(Clone, Debug)]
pub struct ScaleControl {
    cfg: ControlConfig,
    scale: u8,
    srtt: Option<SimTime>,
    expected_seq: u64,
    checkpoint: SimTime,
    holdoff_until: SimTime,
    /// No packet by this time is a time-out (None before the first packet).
    deadline: Option<SimTime>,
    pub counts: ControlCounts,
}

impl ScaleControl {
    pub fn new(cfg: ControlConfig) -> Self {
        ScaleControl {
            scale: cfg.initial_scale,
            cfg,
            srtt: None,
            expected_seq: 0,
            checkpoint: SimTime::ZERO,
            holdoff_until: SimTime::ZERO,
            deadline: None,
            counts: ControlCounts::default(),
        }
    }

    pub fn scale(&self) -> u8 {
        self.scale
    }
    pub fn srtt(&self) -> Option<SimTime> {
        self.srtt
    }
    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }

    /// max(measured RTT, longest frame interval).
    pub fn control_rtt(&self) -> SimTime {
        self.srtt
            .unwrap_or(SimTime::ZERO)
            .max(self.cfg.longest_interval)
    }

    fn timeout(&self) -> SimTime {
        SimTime::from_secs_f64(self.control_rtt().as_secs_f64() * self.cfg.timeout_factor)
    }

    /// An RTT sample (from an echo).
    pub fn rtt_sample(&mut self, rtt: SimTime) {
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(s) => SimTime::from_nanos((7 * s.as_nanos() + rtt.as_nanos()) / 8),
        });
    }

    /// The control starts counting at `now` (the flow's start).
    pub fn start(&mut self, now: SimTime) {
        self.checkpoint = now;
    }

    /// A data packet `seq` arrived; returns the new scale to request.
    pub fn on_packet(&mut self, now: SimTime, seq: u64) -> Option<u8> {
        let gap = seq.saturating_sub(self.expected_seq);
        self.expected_seq = self.expected_seq.max(seq + 1);
        let change = if gap > 0 {
            self.counts.missing_packets += gap;
            self.loss(now)
        } else {
            self.maybe_increase(now)
        };
        self.deadline = Some(now + self.timeout());
        change
    }

    /// The time-out check at `now`: a loss if nothing arrived in time.
    pub fn on_timer(&mut self, now: SimTime) -> Option<u8> {
        match self.deadline {
            Some(d) if now >= d => {
                self.counts.timeouts += 1;
                let change = self.loss(now);
                self.deadline = Some(now + self.timeout());
                change
            }
            _ => None,
        }
    }

    fn loss(&mut self, now: SimTime) -> Option<u8> {
        self.counts.loss_indications += 1;
        if self.cfg.holdoff && now < self.holdoff_until {
            return None;
        }
        let old = self.scale;
        self.scale /= 2;
        self.checkpoint = now;
        self.holdoff_until = now + self.control_rtt();
        self.counts.decreases += 1;
        (self.scale != old).then_some(self.scale)
    }

    fn maybe_increase(&mut self, now: SimTime) -> Option<u8> {
        if self.scale >= self.cfg.max_scale || now < self.checkpoint + self.control_rtt() {
            return None;
        }
        self.scale += 1;
        self.checkpoint = now;
        self.counts.increases += 1;
        Some(self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site_test() -> (Box<dyn RateController>, Box<dyn FeedbackReceiver>) {
        let rng = crate::sim::RngStreams::new(1, 0);
        let site = CcSite {
            rng: &rng,
            flow: "f",
            packet_bytes: 1000,
            levels_bps: &[100e3, 200e3, 400e3],
            longest_interval: None,
        };
        ScaleCcSpec::default().build(&site)
    }

    /// Data packets (arrival and send time in ms, sequence number) to a
    /// receiving half.
    fn feed(
        rx: &mut dyn FeedbackReceiver,
        packets: impl Iterator<Item = (u64, u64)>,
        out: &mut Vec<Payload>,
    ) {
        for (t, seq) in packets {
            let s = Stamp {
                seq,
                sent_at: ms(t),
                ..Stamp::default()
            };
            rx.on_data(ms(t), &s, 1000, out);
        }
    }

    #[test]
    fn the_two_halves_trade_requests_and_the_echo_measures_the_rtt() {
        let (mut tx, mut rx) = site_test();
        tx.start(ms(0), 100);
        rx.start(ms(0));
        assert_eq!((tx.level(), tx.target_bps()), (Some(0), 100e3));
        let d = |due| Departure {
            bytes: 1000,
            due,
            next_same_size: true,
        };
        // 1000 bytes at 100 kbit/s: 80 ms apart, the control RTT's floor.
        let (s0, next) = tx.on_send(ms(0), d(ms(0)));
        assert_eq!((s0.seq, s0.echo, next), (0, None, ms(80)));
        let mut out = Vec::new();
        rx.on_data(ms(30), &s0, 1000, &mut out);
        let (s1, _) = tx.on_send(ms(80), d(ms(80)));
        rx.on_data(ms(110), &s1, 1000, &mut out);
        assert_eq!(out.len(), 1, "one loss-free control RTT: up one level");
        let req = out[0].get::<ScaleRequest>().copied();
        assert_eq!(
            req,
            Some(ScaleRequest {
                scale: 1,
                sent_at: ms(110)
            })
        );
        // The request reaches the sender at 140 ms; the next packet goes
        // one packet time at 200 kbit/s (40 ms) after the last, at 140.
        let next = tx.on_feedback(ms(140), &out[0], ms(160));
        assert_eq!((next, tx.target_bps()), (Some(ms(140)), 200e3));
        // Held 10 ms: the RTT sample is 180 - 110 - 10 = 60 ms, below the
        // 80 ms floor.
        let (s2, _) = tx.on_send(ms(150), d(ms(140)));
        assert_eq!(
            s2.echo,
            Some(Echo {
                sent_at: ms(110),
                held: ms(10)
            })
        );
        rx.on_data(ms(180), &s2, 1000, &mut out);
        let ms_of = |name| (rx.value(name).unwrap() * 1e6).round() / 1e6;
        assert_eq!((ms_of("srtt_ms"), ms_of("control_rtt_ms")), (60.0, 80.0));
        assert_eq!(rx.series("requested_scale").map(|s| s.len()), Some(2));
    }

    #[test]
    fn levels_must_come_from_the_spec_or_the_media() {
        let mut c = Checker::default();
        ScaleCcSpec::default().validate(
            "cc",
            CcMedia {
                levels: 0,
                ..CcMedia::default()
            },
            &mut c,
        );
        assert_eq!(c.errs.len(), 1);
        assert!(c.errs[0].to_string().contains("cc.levels_bps"));
        let mut c = Checker::default();
        let spec = ScaleCcSpec {
            initial_level: 5,
            ..ScaleCcSpec::default()
        };
        spec.validate(
            "cc",
            CcMedia {
                levels: 5,
                ..CcMedia::default()
            },
            &mut c,
        );
        assert!(c.errs[0].to_string().contains("cc.initial_level"));
    }

    #[test]
    fn a_spec_left_empty_takes_the_documented_defaults() {
        let spec: ScaleCcSpec = serde_json::from_str("{}").expect("all optional");
        assert_eq!((spec.timeout_factor, spec.holdoff), (1.5, true));
        assert_eq!((spec.initial_level, spec.levels_bps), (0, None));
    }

    /// Loss-free packets 10 ms apart climb one level per control RTT up to
    /// the last of the site's three levels, and no further; the rate series
    /// starts at the initial level.
    #[test]
    fn a_built_control_climbs_to_its_top_level_and_stops() {
        let (mut tx, mut rx) = site_test();
        tx.start(ms(0), 100);
        rx.start(ms(0));
        assert_eq!(tx.rate_series(), vec![(ms(0), 100e3)]);
        let mut out = Vec::new();
        feed(rx.as_mut(), (0..200u64).map(|k| (10 * k, k)), &mut out);
        let scales: Vec<u8> = (out.iter())
            .map(|p| p.get::<ScaleRequest>().expect("a request").scale)
            .collect();
        assert_eq!(scales, vec![1, 2]);
    }

    #[test]
    fn the_timeout_factor_is_a_finite_number_from_one() {
        let errs = |f: f64| {
            let mut c = Checker::default();
            let spec = ScaleCcSpec {
                timeout_factor: f,
                ..ScaleCcSpec::default()
            };
            spec.validate(
                "cc",
                CcMedia {
                    levels: 3,
                    ..CcMedia::default()
                },
                &mut c,
            );
            c.errs.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        };
        assert!(errs(1.0).is_empty());
        for bad in [0.5, f64::INFINITY, f64::NAN] {
            let e = errs(bad);
            assert_eq!(e.len(), 1, "{bad}: {e:?}");
            assert!(e[0].contains("cc.timeout_factor"), "{e:?}");
        }
    }

    /// The sender numbers and dates its packets, counts them, and on a new
    /// level puts the next packet one packet time at the new rate after
    /// the last one (100 ms + 1000 bytes at 200 kbit/s = 140 ms).
    #[test]
    fn the_sender_half_stamps_counts_and_retimes_on_a_new_level() {
        let (mut tx, _) = site_test();
        tx.start(ms(0), 100);
        let d = |due| Departure {
            bytes: 1000,
            due,
            next_same_size: false,
        };
        let mut stamps = Vec::new();
        for t in [0, 80, 100] {
            stamps.push(tx.on_send(ms(t), d(ms(t))).0);
        }
        let got: Vec<(u64, SimTime)> = stamps.iter().map(|s| (s.seq, s.sent_at)).collect();
        assert_eq!(got, vec![(0, ms(0)), (1, ms(80)), (2, ms(100))]);
        assert_eq!(tx.packets(), 3);
        let up = Payload::new(ScaleRequest {
            scale: 1,
            sent_at: ms(90),
        });
        assert_eq!(tx.on_feedback(ms(110), &up, ms(180)), Some(ms(140)));
        // The same level again: the caller's time stands.
        assert_eq!(tx.on_feedback(ms(120), &up, ms(180)), Some(ms(180)));
        assert_eq!(tx.rate_series(), vec![(ms(0), 100e3), (ms(110), 200e3)]);
    }

    /// Up to level 2 by loss-free packets, then silence: the built
    /// receiver's deadline is 1.5 control RTTs (1.5 x 80 ms, the packet
    /// time at the slowest level) after the last packet, and its timer
    /// halves the scale to 1.
    #[test]
    fn a_silent_sender_times_out_through_the_built_receiver() {
        let (_, mut rx) = site_test();
        rx.start(ms(0));
        let mut out = Vec::new();
        feed(rx.as_mut(), (0..50u64).map(|k| (10 * k, k)), &mut out);
        assert_eq!(rx.deadline(), Some(ms(490 + 120)));
        out.clear();
        rx.on_timer(ms(610), &mut out);
        let scales: Vec<u8> = out
            .iter()
            .map(|p| p.get::<ScaleRequest>().unwrap().scale)
            .collect();
        assert_eq!(scales, vec![1]);
        assert_eq!(rx.value("timeouts"), Some(1.0));
    }

    /// The receiver's counters by name: a gap of one packet is one
    /// missing packet and one loss indication; the control RTT is its
    /// floor (80 ms) before any RTT sample. Its series keeps the rows it
    /// is given.
    #[test]
    fn the_receiver_reports_its_counts_by_name() {
        let (_, mut rx) = site_test();
        rx.set_series_rows(1);
        rx.start(ms(0));
        let mut out = Vec::new();
        feed(
            rx.as_mut(),
            [(0, 0), (10, 1), (20, 3)].into_iter(),
            &mut out,
        );
        assert_eq!(rx.value("missing_packets"), Some(1.0));
        assert_eq!(rx.value("loss_indications"), Some(1.0));
        assert_eq!(rx.value("control_rtt_ms"), Some(80.0));
        assert!(rx.value("srtt_ms").unwrap().is_nan());
        assert_eq!(rx.value("no_such_count"), None);
        assert_eq!(rx.series("requested_scale").map(|s| s.len()), Some(1));
        // Climbing to level 2 records two requests beyond the one row.
        feed(rx.as_mut(), (3..100u64).map(|k| (10 * k, k + 1)), &mut out);
        assert!(!out.is_empty());
        assert_eq!(rx.series("requested_scale").map(|s| s.len()), Some(1));
        // One decrease (the loss, even at scale 0), two increases (to 2).
        assert_eq!(rx.value("decreases"), Some(1.0));
        assert_eq!(rx.value("increases"), Some(2.0));
    }

    #[test]
    fn the_first_increase_waits_a_control_rtt_from_the_start() {
        let mut c = ScaleControl::new(ControlConfig {
            longest_interval: ms(40),
            timeout_factor: 1.5,
            holdoff: true,
            initial_scale: 0,
            max_scale: 4,
        });
        c.start(ms(1000));
        assert_eq!(c.on_packet(ms(1010), 0), None);
        assert_eq!(c.on_packet(ms(1039), 1), None);
        assert_eq!(c.on_packet(ms(1040), 2), Some(1));
    }

    #[test]
    fn a_spec_gives_at_most_256_levels() {
        let errs = |n: usize| {
            let mut c = Checker::default();
            let spec = ScaleCcSpec {
                levels_bps: Some(vec![1e5; n]),
                ..ScaleCcSpec::default()
            };
            spec.validate(
                "cc",
                CcMedia {
                    levels: 0,
                    ..CcMedia::default()
                },
                &mut c,
            );
            c.errs.len()
        };
        assert_eq!((errs(1), errs(256)), (0, 0));
        assert_eq!((errs(0), errs(257)), (1, 1));
    }

    #[test]
    fn a_request_beyond_the_top_level_is_the_top_level_and_is_reported() {
        let (mut tx, _) = site_test();
        tx.start(ms(0), 100);
        let req = |scale| {
            Payload::new(ScaleRequest {
                scale,
                sent_at: ms(0),
            })
        };
        tx.on_feedback(ms(10), &req(2), ms(20));
        assert_eq!((tx.level(), tx.target_bps()), (Some(2), 400e3));
        tx.on_feedback(ms(20), &req(9), ms(30));
        assert_eq!((tx.level(), tx.target_bps()), (Some(2), 400e3));
        tx.on_feedback(ms(30), &req(1), ms(40));
        assert_eq!((tx.level(), tx.target_bps()), (Some(1), 200e3));
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn control(longest_ms: u64, holdoff: bool) -> ScaleControl {
        let mut c = ScaleControl::new(ControlConfig {
            longest_interval: ms(longest_ms),
            timeout_factor: 1.5,
            holdoff,
            initial_scale: 0,
            max_scale: 4,
        });
        c.start(SimTime::ZERO);
        c
    }

    #[test]
    fn one_step_up_per_loss_free_control_rtt() {
        let mut c = control(40, true);
        // Packets every 10 ms; the control RTT is 40 ms (no RTT sample).
        let mut ups = Vec::new();
        for k in 0..20u64 {
            if let Some(s) = c.on_packet(ms(10 * k), k) {
                ups.push((10 * k, s));
            }
        }
        assert_eq!(ups, vec![(40, 1), (80, 2), (120, 3), (160, 4)]);
        assert_eq!(c.counts.increases, 4);
    }

    #[test]
    fn a_gap_halves_and_losses_within_a_control_rtt_do_not_halve_again() {
        let mut c = control(40, true);
        for k in 0..17u64 {
            c.on_packet(ms(10 * k), k);
        }
        assert_eq!(c.scale(), 4);
        assert_eq!(c.on_packet(ms(170), 18), Some(2), "packet 17 missing");
        assert_eq!(
            c.on_packet(ms(180), 20),
            None,
            "19 missing: same congestion"
        );
        assert_eq!(c.scale(), 2);
        assert_eq!(c.counts.missing_packets, 2);
        assert_eq!(c.counts.loss_indications, 2);
        // Beyond the hold-off (40 ms after 170) a new gap halves again.
        assert_eq!(c.on_packet(ms(210), 22), Some(1));
        let mut no_holdoff = control(40, false);
        for k in 0..17u64 {
            no_holdoff.on_packet(ms(10 * k), k);
        }
        no_holdoff.on_packet(ms(170), 18);
        assert_eq!(no_holdoff.on_packet(ms(180), 20), Some(1));
    }

    #[test]
    fn the_increase_waits_a_control_rtt_after_a_decrease() {
        let mut c = control(40, true);
        for k in 0..9u64 {
            c.on_packet(ms(10 * k), k); // scale 2 at 80 ms
        }
        assert_eq!(c.on_packet(ms(90), 10), Some(1));
        for k in 11..14u64 {
            assert_eq!(c.on_packet(ms(10 * (k - 1)), k), None, "before 130 ms");
        }
        assert_eq!(c.on_packet(ms(130), 14), Some(2));
    }

    #[test]
    fn a_silent_sender_times_out_after_factor_times_the_control_rtt() {
        let mut c = control(300, true);
        c.rtt_sample(ms(60)); // below the longest interval: 300 ms rules
        assert_eq!(c.control_rtt(), ms(300));
        assert_eq!(c.on_timer(ms(1000)), None, "no packet yet: no time-out");
        c.on_packet(ms(0), 0);
        assert_eq!(c.deadline(), Some(ms(450)));
        assert_eq!(c.on_timer(ms(449)), None);
        assert_eq!(
            c.on_timer(ms(450)),
            None,
            "a loss at scale 0 changes nothing"
        );
        assert_eq!((c.counts.timeouts, c.counts.decreases), (1, 1));
        assert_eq!(c.deadline(), Some(ms(900)));
    }

    #[test]
    fn the_scale_stops_at_the_highest_level() {
        let mut c = control(10, true);
        for k in 0..100u64 {
            c.on_packet(ms(10 * k), k);
        }
        assert_eq!((c.scale(), c.counts.increases), (4, 4));
    }

    #[test]
    fn rtt_samples_are_smoothed_with_gain_one_eighth() {
        let mut c = control(10, true);
        c.rtt_sample(ms(80));
        assert_eq!(c.srtt(), Some(ms(80)));
        c.rtt_sample(ms(160));
        assert_eq!(c.srtt(), Some(ms(90)));
        assert_eq!(c.control_rtt(), ms(90));
    }
}

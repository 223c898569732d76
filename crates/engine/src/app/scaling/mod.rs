//! Media scaling over UDP (the media-scaling study's MM_APP and MPEG_APP):
//! a sender with five scales, each bound to an encoding or transmission
//! policy, driven by a rate controller: by default the study's
//! receiver-driven control (`proto::cc::scale`), whose receiver picks the
//! scale from the losses it sees and tells the sender in small request
//! packets, the flow "<name>/fb".
//!
//! This file holds the scenario spec, its checks and the construction;
//! `policy.rs` what each scale sends, `apps.rs` the sender.

pub mod apps;
pub mod policy;
#[cfg(test)]
mod tests;

use crate::app::flow::{
    add_flow_pair_meta, claim_and_add, return_template, FlowCommon, FlowModel, ResolvedFlow,
};
use crate::app::paced::{FeedbackSink, Reporting};
use crate::app::{PacketTemplate, StopRule};
use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::proto::cc::{CcMedia, CcSite, CcSpec, FeedbackReceiver};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use crate::sim::SimTime;
use apps::{Media, ScalingSource};
use policy::{longest_gap_slots, mm_interval, place_in_gops, FrameType, SCALES};
use schemars::JsonSchema;
use serde::Deserialize;

use super::Col::{Count, Measure};

/// The `media_scaling` table (the sender's columns, then the receiver's).
pub const TABLE: super::AppTable = super::AppTable {
    name: "media_scaling",
    // Count: an integer (nullable Int64 in Python); Measure: a float in its unit.
    columns: &[
        Count("frames_sent"),
        Count("frames_skipped"),
        Count("packets_sent"),
        Measure("mean_scale"),
        Count("final_scale"),
        Count("missing_packets"),
        Count("loss_indications"),
        Count("timeouts"),
        Count("decreases"),
        Count("increases"),
        Count("requests_sent"),
        Measure("srtt_ms"),
        Measure("control_rtt_ms"),
    ],
    series: true,
};

const HEADERS: u32 = IPV4_HEADER_BYTES + UDP_HEADER_BYTES;

/// The study's MM_APP rates for scales 0-4 (on the wire).
pub const MM_RATES_BPS: [f64; SCALES] = [300e3, 500e3, 700e3, 900e3, 1100e3];

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ScalingApp {
    /// Fixed-size packets; each scale a sending interval.
    Mm,
    /// An MPEG frame trace; each scale a set of the GOP's frames.
    Mpeg,
}

/// Sizes of the frame types in a synthetic trace (bytes of payload).
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrameBytes {
    #[serde(rename = "I")]
    pub i: u32,
    #[serde(rename = "P")]
    pub p: u32,
    #[serde(rename = "B")]
    pub b: u32,
}

/// DSCP per MPEG frame type.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrameDscp {
    #[serde(rename = "I", default)]
    #[schemars(range(max = 63))]
    pub i: Option<u8>,
    #[serde(rename = "P", default)]
    #[schemars(range(max = 63))]
    pub p: Option<u8>,
    #[serde(rename = "B", default)]
    #[schemars(range(max = 63))]
    pub b: Option<u8>,
}

fn default_feedback_bytes() -> u32 {
    40
}

/// A media-scaling flow over UDP (MM_APP or MPEG_APP) with a controller
/// choosing among its five scales; feedback (the receiver's requests) goes
/// back in the flow "<name>/fb".
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MediaScalingSpec {
    /// "mm" or "mpeg".
    pub app: ScalingApp,
    /// mm: the rate of each scale 0-4 on the wire (default the study's
    /// 300, 500, 700, 900, 1100 kbit/s).
    #[serde(default)]
    pub rates_bps: Option<Vec<f64>>,
    /// mm: packet size on the wire (default 1500).
    #[serde(default)]
    pub packet_bytes: Option<u32>,
    /// mpeg: GOP pattern of a synthetic trace (default "IBBPBBPBB").
    #[serde(default)]
    pub gop: Option<String>,
    /// mpeg: frame sizes of a synthetic trace, bytes of payload (default
    /// the study's I 11000, P 8000, B 2000).
    #[serde(default)]
    pub frame_bytes: Option<FrameBytes>,
    /// mpeg: a frame trace instead, [type, bytes] per frame in sending
    /// order, read as a loop (see `mediasim.media.read_trace`).
    #[serde(default)]
    pub frames: Option<Vec<(String, u32)>>,
    /// mpeg: frame slots per second at scale 4 (default 30).
    #[serde(default)]
    pub frame_rate: Option<f64>,
    /// mpeg: largest packet on the wire; larger frames are fragmented
    /// (default 1500).
    #[serde(default)]
    pub max_packet_bytes: Option<u32>,
    /// mpeg: DSCP per frame type, e.g. {I = 10, P = 12, B = 14} (AF11-13:
    /// B frames dropped first); a type not given keeps the flow's `dscp`.
    #[serde(default)]
    pub frame_dscp: Option<FrameDscp>,
    /// The controller that picks the scale (default `{type = "scale"}`,
    /// the study's receiver-driven control, with the media's five levels;
    /// any rate controller may drive the scales instead).
    #[serde(default)]
    pub cc: Option<CcSpec>,
    /// Size of a request packet on the wire (default 40).
    #[serde(default = "default_feedback_bytes")]
    pub feedback_bytes: u32,
}

impl MediaScalingSpec {
    fn rates(&self) -> [f64; SCALES] {
        match &self.rates_bps {
            Some(v) if v.len() == SCALES => std::array::from_fn(|i| v[i]),
            _ => MM_RATES_BPS,
        }
    }

    /// The trace as typed frames (synthetic: one GOP).
    pub fn trace(&self) -> Vec<(FrameType, u32)> {
        let parse = |s: &str| s.chars().next().and_then(FrameType::parse);
        if let Some(frames) = &self.frames {
            return (frames.iter())
                .filter_map(|(t, b)| parse(t).map(|t| (t, *b)))
                .collect();
        }
        let sizes = self.frame_bytes.unwrap_or(FrameBytes {
            i: 11_000,
            p: 8_000,
            b: 2_000,
        });
        let gop = self.gop.as_deref().unwrap_or("IBBPBBPBB");
        (gop.chars().filter_map(FrameType::parse))
            .map(|t| {
                let b = match t {
                    FrameType::I => sizes.i,
                    FrameType::P => sizes.p,
                    FrameType::B => sizes.b,
                };
                (t, b)
            })
            .collect()
    }

    fn slot(&self) -> SimTime {
        SimTime::from_secs_f64(1.0 / self.frame_rate.unwrap_or(30.0))
    }

    /// The media the sender sends, and the longest frame interval.
    pub fn media(&self) -> (Media, SimTime) {
        match self.app {
            ScalingApp::Mm => {
                let (rates, size) = (self.rates(), self.packet_bytes.unwrap_or(1500));
                let slowest = rates.iter().copied().fold(f64::INFINITY, f64::min);
                let media = Media::Mm {
                    rates_bps: rates,
                    packet_bytes: size,
                };
                (media, mm_interval(slowest, size))
            }
            ScalingApp::Mpeg => {
                let frames = place_in_gops(&self.trace());
                let slot = self.slot();
                let longest =
                    SimTime::from_nanos(slot.as_nanos() * longest_gap_slots(&frames) as u64);
                let d = self.frame_dscp.unwrap_or_default();
                let media = Media::Mpeg {
                    frames,
                    slot,
                    max_packet_bytes: self.max_packet_bytes.unwrap_or(1500),
                    frame_dscp: [d.i, d.p, d.b],
                };
                (media, longest)
            }
        }
    }

    /// Each scale's average rate (payload, on the wire) in bit/s.
    pub fn scale_rates(&self) -> [(f64, f64); SCALES] {
        match self.media().0 {
            Media::Mm {
                rates_bps,
                packet_bytes,
            } => {
                let payload_share = (packet_bytes - HEADERS) as f64 / packet_bytes as f64;
                rates_bps.map(|r| (r * payload_share, r))
            }
            Media::Mpeg {
                frames,
                slot,
                max_packet_bytes,
                ..
            } => policy::mpeg_rates(&frames, 1.0 / slot.as_secs_f64(), max_packet_bytes),
        }
    }

    fn validate_mm(&self, p: &str, c: &mut Checker) {
        if let Some(v) = &self.rates_bps {
            if v.len() != SCALES {
                let msg = format!("give one rate per scale 0-4 (got {})", v.len());
                c.err(format!("{p}.rates_bps"), msg);
            }
            for (i, r) in v.iter().enumerate() {
                c.positive(format_args!("{p}.rates_bps[{i}]"), *r);
            }
        }
        if let Some(b) = self.packet_bytes {
            c.wire_bytes(format_args!("{p}.packet_bytes"), b, HEADERS);
        }
        let mpeg_only = [
            ("gop", self.gop.is_some()),
            ("frame_bytes", self.frame_bytes.is_some()),
            ("frames", self.frames.is_some()),
            ("frame_rate", self.frame_rate.is_some()),
            ("max_packet_bytes", self.max_packet_bytes.is_some()),
            ("frame_dscp", self.frame_dscp.is_some()),
        ];
        not_for(p, "mm", &mpeg_only, c);
    }

    fn validate_mpeg(&self, p: &str, c: &mut Checker) {
        if let Some(g) = &self.gop {
            if !g.starts_with('I') || !g.chars().all(|x| FrameType::parse(x).is_some()) {
                let msg = format!("must be I, P and B frames starting with I (got \"{g}\")");
                c.err(format!("{p}.gop"), msg);
            }
        }
        if self.frames.is_some() && (self.gop.is_some() || self.frame_bytes.is_some()) {
            c.err(p, "give frames (a trace) or gop and frame_bytes, not both");
        }
        if let Some(frames) = &self.frames {
            if frames.is_empty() {
                c.err(format!("{p}.frames"), "must hold at least one frame");
            }
            for (i, (t, _)) in frames.iter().enumerate() {
                if !matches!(t.as_str(), "I" | "P" | "B") {
                    let msg = format!("frame type must be \"I\", \"P\" or \"B\" (got \"{t}\")");
                    c.err(format!("{p}.frames[{i}]"), msg);
                }
            }
        }
        if let Some(r) = self.frame_rate {
            c.positive(format_args!("{p}.frame_rate"), r);
            // Each frame slot sends at least one packet.
            c.packet_rate(format_args!("{p}.frame_rate"), r, "the frame rate");
        }
        let d = self.frame_dscp.unwrap_or_default();
        for (t, v) in [("I", d.i), ("P", d.p), ("B", d.b)] {
            if let Some(v) = v.filter(|&v| v > 63) {
                c.err(
                    format!("{p}.frame_dscp.{t}"),
                    format!("must be 0..=63 (got {v})"),
                );
            }
        }
        if let Some(m) = self.max_packet_bytes {
            c.wire_bytes(format_args!("{p}.max_packet_bytes"), m, HEADERS + 1);
        }
        let mm_only = [
            ("rates_bps", self.rates_bps.is_some()),
            ("packet_bytes", self.packet_bytes.is_some()),
        ];
        not_for(p, "mpeg", &mm_only, c);
    }
}

/// Each scale's (payload, wire) rate of a media-scaling flow's own
/// fields (app, gop, frames...), after the flow's checks; the first
/// problem otherwise, as `path: message`.
pub fn checked_scale_rates(spec: &MediaScalingSpec) -> Result<Vec<(f64, f64)>, String> {
    let mut c = Checker::default();
    let common: FlowCommon =
        serde_json::from_value(serde_json::json!({"name": "f", "src": "a", "dst": "b"}))
            .map_err(|e| e.to_string())?;
    let scope = Scope {
        nodes: Default::default(),
        groups: Default::default(),
        flows: Default::default(),
        duration_s: f64::INFINITY,
    };
    spec.validate(&common, "flow", &scope, &mut c);
    if let Some(e) = c.errs.first() {
        return Err(e.to_string());
    }
    Ok(spec.scale_rates().to_vec())
}

/// Fields another app takes, given to this one.
fn not_for(p: &str, app: &str, given: &[(&str, bool)], c: &mut Checker) {
    for (field, _) in given.iter().filter(|(_, g)| *g) {
        c.err(
            format!("{p}.{field}"),
            format!("not used by app = \"{app}\""),
        );
    }
}

impl FlowModel for MediaScalingSpec {
    fn derived_suffixes(&self) -> &'static [&'static str] {
        &["fb"]
    }
    fn needs_return_route(&self) -> bool {
        true
    }
    fn validate(&self, flow: &FlowCommon, p: &str, _scope: &Scope<'_>, c: &mut Checker) {
        crate::app::flow::require_unicast(flow, p, "media_scaling", c);
        match self.app {
            ScalingApp::Mm => self.validate_mm(p, c),
            ScalingApp::Mpeg => self.validate_mpeg(p, c),
        }
        let media = CcMedia {
            levels: SCALES,
            ..CcMedia::default()
        };
        self.controller()
            .model()
            .validate(&format!("{p}.cc"), media, c);
        c.wire_bytes(
            format_args!("{p}.feedback_bytes"),
            self.feedback_bytes,
            HEADERS,
        );
    }

    fn build(&self, f: &ResolvedFlow<'_>, ctx: &mut BuildCtx<'_>) {
        let d = f.receivers[0];
        let (media, longest) = self.media();
        let levels_bps = self.scale_rates().map(|(_, wire)| wire);
        let data_tpl = f.udp_template(0);
        let site = CcSite {
            rng: ctx.rng,
            flow: &f.spec.name,
            packet_bytes: self.packet_bytes.or(self.max_packet_bytes).unwrap_or(1500),
            levels_bps: &levels_bps,
            longest_interval: Some(longest),
        };
        let (cc, rx) = self.controller().model().build(&site);
        let fb_tpl = PacketTemplate {
            payload_bytes: self.feedback_bytes - HEADERS,
            ..return_template(f, &data_tpl)
        };
        let stop = StopRule {
            stop: f.stop,
            max_packets: None,
        };
        let source = ScalingSource::new(data_tpl, media, stop, cc, levels_bps);
        claim_and_add(f, "src_port", f.src, f.src_port, Box::new(source), ctx);
        let sink = FeedbackSink::new(fb_tpl, rx, f.id, REPORTING);
        claim_and_add(f, "dst_port", d, f.dst_port, Box::new(sink), ctx);
        let suffix = self.derived_suffixes()[0];
        add_flow_pair_meta(f, "media_scaling", suffix, "scaling_feedback", ctx);
    }
}

impl MediaScalingSpec {
    /// The flow's controller (the study's scale control unless given).
    fn controller(&self) -> CcSpec {
        (self.cc.clone()).unwrap_or_else(|| CcSpec::Scale(Default::default()))
    }
}

/// The receiver's part of a `media_scaling` row (the sender writes its own
/// part): the control's counters, NaN for a controller without them.
const REPORTING: Reporting = Reporting {
    table: "media_scaling",
    feedback_kind: "scaling_feedback",
    sender: |_| (vec![], vec![]),
    receiver: |rx: &dyn FeedbackReceiver, _received, sent| {
        let v = |name| rx.value(name).unwrap_or(f64::NAN);
        (
            vec![
                ("missing_packets", v("missing_packets")),
                ("loss_indications", v("loss_indications")),
                ("timeouts", v("timeouts")),
                ("decreases", v("decreases")),
                ("increases", v("increases")),
                ("requests_sent", sent as f64),
                ("srtt_ms", v("srtt_ms")),
                ("control_rtt_ms", v("control_rtt_ms")),
            ],
            vec![(
                "requested_scale",
                rx.series("requested_scale").unwrap_or_default(),
            )],
        )
    },
};

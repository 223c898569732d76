//! Scalable video over a rate-controlled transport (the SVC study):
//! - `trace.rs`: the NAL-unit trace model, its synthetic generator and
//!   parser, and the per-GOP layer selection with the FGS cut;
//! - `decode.rs`: which received NAL units a decoder can use;
//! - `fec.rs`: the systematic block codes and the residual-loss model;
//! - `source.rs` and `sink.rs`: the sender over TFRC (send buffer, layer
//!   selection, packetisation, DSCP per layer) and the receiver
//!   (reassembly, playout deadline, decodable bytes).
//!
//! This file holds the `svc` flow type's spec, checks and construction.

pub mod decode;
pub mod fec;
pub mod sink;
pub mod source;
#[cfg(test)]
mod tests;
pub mod trace;

use crate::app::flow::{
    add_flow_pair_meta, claim_and_add, require_unicast, return_template, FlowCommon, FlowModel,
    ResolvedFlow,
};
use crate::app::PacketTemplate;
use crate::net::packet::{IPV4_HEADER_BYTES, UDP_HEADER_BYTES};
use crate::proto::cc::{CcMedia, CcSite, CcSpec};
use crate::scenario::build::BuildCtx;
use crate::scenario::check::{Checker, Scope};
use crate::sim::SimTime;
use schemars::JsonSchema;
use serde::Deserialize;
use sink::SvcSink;
use source::{Packetiser, SvcSource};
use trace::{NalFeed, SvcModel};

use super::Col::{Count, Measure};

/// The `svc` table (the source's columns, then the sink's).
pub const TABLE: super::AppTable = super::AppTable {
    name: "svc",
    // Count: an integer (nullable Int64 in Python); Measure: a float in its unit.
    columns: &[
        Count("packets_sent"),
        Count("media_packets"),
        Count("fec_repair_packets"),
        Count("offered_bytes_base"),
        Count("offered_bytes_s0_fgs"),
        Count("offered_bytes_s1"),
        Count("offered_bytes_s1_fgs"),
        Measure("final_rate_bps"),
        Count("buffer_bytes_at_end"),
        Count("skipped_bytes"),
        Count("media_packets_received"),
        Count("fec_recovered_packets"),
        Count("fec_repair_received"),
        Count("media_packets_kept"),
        Count("bytes_in_time"),
        Count("bytes_late"),
        Count("decodable_bytes_base"),
        Count("decodable_bytes_s0_fgs"),
        Count("decodable_bytes_s1"),
        Count("decodable_bytes_s1_fgs"),
        Count("decodable_base_frames"),
        Measure("p"),
        Measure("available_bps"),
    ],
    series: true,
};

const RTP_HEADER_BYTES: u32 = 12;

pub use trace::NalRow;
const HEADERS: u32 = IPV4_HEADER_BYTES + UDP_HEADER_BYTES + RTP_HEADER_BYTES;

fn d_packet() -> u32 {
    1250
}
fn d_fps() -> f64 {
    30.0
}
fn d_layers() -> [[f64; 2]; 2] {
    [[160e3, 160e3], [400e3, 400e3]]
}
fn d_cv() -> f64 {
    0.3
}
fn d_base() -> u8 {
    10
}
fn d_enh() -> u8 {
    12
}
fn d_playout() -> f64 {
    1000.0
}
fn d_fb() -> u32 {
    44
}
fn d_idr() -> u32 {
    4
}
fn d_send_buffer() -> u64 {
    64 << 20
}

/// FEC over the media packets: a systematic block code.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FecKind {
    /// Reed-Solomon: any k of n packets rebuild the block.
    Rs,
    /// One XOR parity packet (n = k + 1).
    Xor,
}

fn d_fec_dscp() -> u8 {
    14
}

/// FEC settings: `k` media packets per block and `n` packets in all,
/// repair packets marked `dscp` (AF13 by default, below the media).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FecSpec {
    pub code: FecKind,
    pub k: u32,
    /// Packets per block with the repair (rs; xor has k + 1).
    #[serde(default)]
    pub n: Option<u32>,
    #[serde(default = "d_fec_dscp")]
    #[schemars(range(max = 63))]
    pub dscp: u8,
}

impl FecSpec {
    fn code(&self) -> fec::FecCode {
        match self.code {
            FecKind::Rs => fec::FecCode::Rs {
                k: self.k,
                n: self.n.unwrap_or(self.k + 1),
            },
            FecKind::Xor => fec::FecCode::Xor { k: self.k },
        }
    }

    fn validate(&self, p: &str, c: &mut Checker) {
        c.at_least_one(format_args!("{p}.k"), Some(self.k as u64));
        match (self.code, self.n) {
            (FecKind::Rs, Some(n)) if n <= self.k || n > 255 => {
                let msg = format!("must be above k ({}) and at most 255 (got {n})", self.k);
                c.err(format!("{p}.n"), msg);
            }
            (FecKind::Xor, Some(_)) => {
                c.err(format!("{p}.n"), "not used by code = \"xor\" (n = k + 1)")
            }
            _ => {}
        }
        if self.k >= 255 {
            c.err(
                format!("{p}.k"),
                format!("must be below 255 (got {})", self.k),
            );
        }
        if self.dscp > 63 {
            c.err(
                format!("{p}.dscp"),
                format!("must be 0..=63 (got {})", self.dscp),
            );
        }
    }
}

/// Scalable video (SVC) over a rate-controlled transport: a synthetic
/// trace (or `nal_units`), per-GOP layer selection, RTP packets with the
/// base layer at `base_dscp` and enhancement at `enhancement_dscp`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SvcSpec {
    /// The rate controller: `{type = "tfrc"}`, `{type = "ppacc",
    /// capacity_bps = ...}`, `{type = "fixed", rate_bps = ...}`.
    pub cc: CcSpec,
    /// FEC over the media packets (none by default).
    #[serde(default)]
    pub fec: Option<FecSpec>,
    /// Packet size on the wire (IP, UDP and RTP headers included).
    #[serde(default = "d_packet")]
    pub packet_bytes: u32,
    /// Frames per second of the synthetic trace.
    #[serde(default = "d_fps")]
    pub fps: f64,
    /// Mean rate of each (spatial, quality) layer, bit/s.
    #[serde(default = "d_layers")]
    pub layer_bps: [[f64; 2]; 2],
    /// Coefficient of variation of NAL unit sizes.
    #[serde(default = "d_cv")]
    pub size_cv: f64,
    /// A trace instead: [time_s, bytes, spatial, temporal, quality] per NAL
    /// unit (`mediasim.media.read_svc_trace` reads the text format).
    #[serde(default)]
    pub nal_units: Option<Vec<NalRow>>,
    /// DSCP of the base layer (spatial 0, quality 0): AF11.
    #[serde(default = "d_base")]
    #[schemars(range(max = 63))]
    pub base_dscp: u8,
    /// DSCP of the enhancement layers: AF12.
    #[serde(default = "d_enh")]
    #[schemars(range(max = 63))]
    pub enhancement_dscp: u8,
    /// Packets later than their frame time plus this are discarded.
    #[serde(default = "d_playout")]
    pub playout_delay_ms: f64,
    /// TFRC feedback packet size on the wire.
    #[serde(default = "d_fb")]
    pub feedback_bytes: u32,
    /// An IDR picture every this many GOPs (where a layer left out can be
    /// taken up again): 4, about 1 s.
    #[serde(default = "d_idr")]
    pub idr_gops: u32,
    /// The sender's buffer holds at most this many bytes: a NAL unit that
    /// would overflow it is not sent (counted as `skipped_bytes`). 64 MiB,
    /// chosen here: far above what the layer selection lets build up at the
    /// studies' rates, and a bound on memory for a source far faster than
    /// its path.
    #[serde(default = "d_send_buffer")]
    pub send_buffer_bytes: u64,
}

/// Largest coefficient of variation of NAL unit sizes: a log-normal of
/// CV 100 already puts nearly all bytes in a few huge units.
const MAX_SIZE_CV: f64 = 100.0;

impl SvcSpec {
    /// The NAL units from the trace, or generated for `seconds` as the
    /// source reaches them.
    fn nal_feed(&self, seconds: f64, rng: crate::sim::SimRng) -> NalFeed {
        if let Some(units) = &self.nal_units {
            return NalFeed::Trace(trace::nals_from_rows(units).unwrap_or_default());
        }
        let model = SvcModel {
            fps: self.fps,
            layer_bps: self.layer_bps,
            cv: self.size_cv,
        };
        NalFeed::Model {
            model,
            rng,
            // Saturates at u32::MAX frames (over 4 years at 30 frames/s).
            frames: (seconds * self.fps).ceil() as u32,
            next: 0,
        }
    }
}

impl FlowModel for SvcSpec {
    fn derived_suffixes(&self) -> &'static [&'static str] {
        &["fb"]
    }
    fn needs_return_route(&self) -> bool {
        true
    }
    fn validate(&self, flow: &FlowCommon, p: &str, _scope: &Scope<'_>, c: &mut Checker) {
        require_unicast(flow, p, "svc", c);
        self.cc
            .model()
            .validate(&format!("{p}.cc"), CcMedia::default(), c);
        if let Some(f) = &self.fec {
            f.validate(&format!("{p}.fec"), c);
        }
        c.wire_bytes(
            format_args!("{p}.packet_bytes"),
            self.packet_bytes,
            HEADERS + 1,
        );
        c.positive(format_args!("{p}.fps"), self.fps);
        for (i, row) in self.layer_bps.iter().enumerate() {
            for (j, &r) in row.iter().enumerate() {
                c.positive(format_args!("{p}.layer_bps[{i}][{j}]"), r);
            }
        }
        c.non_negative(format_args!("{p}.size_cv"), self.size_cv);
        c.at_most(format_args!("{p}.size_cv"), self.size_cv, MAX_SIZE_CV);
        c.positive(format_args!("{p}.playout_delay_ms"), self.playout_delay_ms);
        for (f, d) in [
            ("base_dscp", self.base_dscp),
            ("enhancement_dscp", self.enhancement_dscp),
        ] {
            if d > 63 {
                c.err(format!("{p}.{f}"), format!("must be 0..=63 (got {d})"));
            }
        }
        if let Some(units) = &self.nal_units {
            if let Err(e) = trace::nals_from_rows(units) {
                c.err(format!("{p}.nal_units"), e);
            }
        }
        c.at_least_one(format_args!("{p}.idr_gops"), Some(self.idr_gops as u64));
        c.at_least_one(
            format_args!("{p}.send_buffer_bytes"),
            Some(self.send_buffer_bytes),
        );
        c.wire_bytes(format_args!("{p}.feedback_bytes"), self.feedback_bytes, 28);
    }
    fn build(&self, f: &ResolvedFlow<'_>, ctx: &mut BuildCtx<'_>) {
        let seconds = f.stop.saturating_sub(f.start).as_secs_f64();
        let rng = ctx.stream(&format!("flow:{}:svc", f.spec.name));
        let nals = self.nal_feed(seconds, rng);
        let data = f.udp_template(0);
        let fb = PacketTemplate {
            payload_bytes: self.feedback_bytes - IPV4_HEADER_BYTES - UDP_HEADER_BYTES,
            ..return_template(f, &data)
        };
        let pk = Packetiser {
            payload: self.packet_bytes - HEADERS,
            headers: HEADERS,
            base_dscp: self.base_dscp,
            enhancement_dscp: self.enhancement_dscp,
        };
        let site = CcSite {
            rng: ctx.rng,
            flow: &f.spec.name,
            packet_bytes: self.packet_bytes,
            levels_bps: &[],
            longest_interval: None,
        };
        let (cc, rx) = self.cc.model().build(&site);
        let fec = self.fec.as_ref().map(|x| source::FecSetup {
            code: x.code(),
            dscp: x.dscp,
        });
        let source = SvcSource::new(data, cc, pk, nals, self.fps, self.idr_gops, f.stop)
            .with_fec(fec)
            .with_buffer_limit(self.send_buffer_bytes);
        claim_and_add(f, "src_port", f.src, f.src_port, Box::new(source), ctx);
        let playout = SimTime::from_millis_f64(self.playout_delay_ms);
        let sink = SvcSink::new(fb, rx, f.id, playout, HEADERS, self.idr_gops)
            .with_fec(self.fec.as_ref().map(FecSpec::code));
        claim_and_add(
            f,
            "dst_port",
            f.receivers[0],
            f.dst_port,
            Box::new(sink),
            ctx,
        );
        add_flow_pair_meta(f, "svc", self.derived_suffixes()[0], "svc_feedback", ctx);
    }
}

//! pcap writer: one classic pcap file (nanosecond timestamps, LINKTYPE_RAW,
//! i.e. bare IPv4) per link. Packets are captured when their transmission
//! starts, as a capture on the sending interface would see them.

use crate::net::packet::Transport;
use crate::net::Packet;
use crate::sim::SimTime;
use crate::wire::{ipv4, tcp, udp};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
const LINKTYPE_RAW: u32 = 101;

pub struct PcapWriter {
    out: BufWriter<File>,
    snaplen: u32,
    buf: Vec<u8>,
}

impl PcapWriter {
    /// `snaplen` 0 captures whole packets (payload bytes are zeros).
    pub fn create(path: &Path, snaplen: u32) -> std::io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        let file_snaplen = if snaplen == 0 { 65535 } else { snaplen };
        out.write_all(&MAGIC_NANOS.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?;
        out.write_all(&0u32.to_le_bytes())?;
        out.write_all(&file_snaplen.to_le_bytes())?;
        out.write_all(&LINKTYPE_RAW.to_le_bytes())?;
        Ok(PcapWriter {
            out,
            snaplen,
            buf: Vec::with_capacity(2048),
        })
    }

    /// Writes one record: the packet's bytes built from its headers
    /// (payload bytes beyond the headers are zero), captured at `now`.
    pub fn write(
        &mut self,
        now: SimTime,
        p: &Packet,
        src: [u8; 4],
        dst: [u8; 4],
    ) -> std::io::Result<()> {
        let len = p.size_bytes as usize;
        self.buf.clear();
        self.buf.resize(len, 0);
        let protocol = match p.transport {
            Transport::Udp => ipv4::PROTO_UDP,
            Transport::Tcp(_) => tcp::PROTO_TCP,
        };
        ipv4::Ipv4Repr {
            src,
            dst,
            protocol,
            total_len: len as u16,
            ident: p.id as u16,
            dscp: p.dscp,
            ecn: p.ecn,
            ttl: 64,
        }
        .emit(&mut self.buf);
        let seg = &mut self.buf[ipv4::HEADER_LEN..];
        match &p.transport {
            Transport::Tcp(h) => tcp::emit(h, p.src_port, p.dst_port, seg, src, dst),
            Transport::Udp => {
                // The application header goes in first: the UDP checksum
                // covers it.
                p.app.emit(p, now, &mut seg[udp::HEADER_LEN..]);
                let udp = udp::UdpRepr {
                    src_port: p.src_port,
                    dst_port: p.dst_port,
                    len: seg.len() as u16,
                };
                udp.emit(seg, src, dst);
            }
        }
        self.write_record(now, len)
    }

    /// The record header (ns timestamps) and the captured bytes.
    fn write_record(&mut self, now: SimTime, len: usize) -> std::io::Result<()> {
        let cap = if self.snaplen == 0 {
            len
        } else {
            len.min(self.snaplen as usize)
        };
        let ns = now.as_nanos();
        self.out
            .write_all(&((ns / 1_000_000_000) as u32).to_le_bytes())?;
        self.out
            .write_all(&((ns % 1_000_000_000) as u32).to_le_bytes())?;
        self.out.write_all(&(cap as u32).to_le_bytes())?;
        self.out.write_all(&(len as u32).to_le_bytes())?;
        self.out.write_all(&self.buf[..cap])
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::test_packet;

    /// The file a writer with `snaplen` makes of one 200-byte UDP packet
    /// captured at 2.000000123 s.
    fn capture(snaplen: u32) -> Vec<u8> {
        let path = std::env::temp_dir().join(format!(
            "mediasim-pcap-test-{}-{snaplen}.pcap",
            std::process::id()
        ));
        let mut w = PcapWriter::create(&path, snaplen).expect("create");
        let p = test_packet(0, 7, 200);
        let now = SimTime(2_000_000_123);
        w.write(now, &p, [10, 0, 0, 1], [10, 0, 0, 2])
            .expect("write");
        w.flush().expect("flush");
        let bytes = std::fs::read(&path).expect("read");
        std::fs::remove_file(&path).expect("remove");
        bytes
    }

    fn u32_at(b: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
    }

    #[test]
    fn a_record_has_its_nanosecond_time_lengths_and_ipv4_bytes() {
        let b = capture(0);
        // The global header: nanosecond magic, version 2.4, snaplen 65535
        // for whole packets, LINKTYPE_RAW.
        assert_eq!(b.len(), 24 + 16 + 200);
        assert_eq!(u32_at(&b, 0), 0xa1b2_3c4d);
        assert_eq!((&b[4..6], &b[6..8]), (&[2u8, 0][..], &[4u8, 0][..]));
        assert_eq!((u32_at(&b, 16), u32_at(&b, 20)), (65_535, 101));
        // The record header: seconds, nanoseconds, captured, original.
        let r = &b[24..40];
        assert_eq!(
            (u32_at(r, 0), u32_at(r, 4), u32_at(r, 8), u32_at(r, 12)),
            (2, 123, 200, 200)
        );
        // IPv4 (version 4, 20-byte header), its total length, UDP, the
        // addresses, then the ports and the UDP length.
        let ip = &b[40..];
        assert_eq!(
            (ip[0], u16::from_be_bytes([ip[2], ip[3]]), ip[9]),
            (0x45, 200, 17)
        );
        assert_eq!(
            (&ip[12..16], &ip[16..20]),
            (&[10u8, 0, 0, 1][..], &[10u8, 0, 0, 2][..])
        );
        let udp: Vec<u16> = (0..3)
            .map(|k| u16::from_be_bytes([ip[20 + 2 * k], ip[21 + 2 * k]]))
            .collect();
        assert_eq!(udp, [1, 2, 180]);
    }

    #[test]
    fn a_snaplen_cuts_the_capture_not_the_original_length() {
        let whole = capture(0);
        let b = capture(40);
        assert_eq!(b.len(), 24 + 16 + 40);
        assert_eq!(u32_at(&b, 16), 40);
        assert_eq!((u32_at(&b, 32), u32_at(&b, 36)), (40, 200));
        assert_eq!(b[40..], whole[40..80], "the first 40 bytes");
    }
}

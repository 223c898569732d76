//! Constant bit rate source: one packet of fixed size every `interval`.

use super::{Action, App, PacketTemplate, StopRule};
use crate::sim::SimTime;

pub struct CbrSource {
    tpl: PacketTemplate,
    interval: SimTime,
    stop: StopRule,
    next_seq: u64,
}

impl CbrSource {
    pub fn new(tpl: PacketTemplate, interval: SimTime, stop: StopRule) -> Self {
        CbrSource {
            tpl,
            interval,
            stop,
            next_seq: 0,
        }
    }

    fn emit(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if !self.stop.allows(now, self.next_seq) {
            return;
        }
        out.push(Action::Send(self.tpl.make(self.next_seq)));
        self.next_seq += 1;
        out.push(Action::Timer {
            at: now + self.interval,
            token: 0,
        });
    }
}

impl App for CbrSource {
    fn on_start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.emit(now, out);
    }
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Action>) {
        self.emit(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Dest, Transport};

    #[test]
    fn sends_every_interval_until_stop() {
        let tpl = PacketTemplate {
            flow: 3,
            dst: Dest::Node(1),
            src_port: 5,
            dst_port: 6,
            dscp: 0,
            payload_bytes: 40,
            transport: Transport::Udp,
        };
        let stop = StopRule {
            stop: SimTime::from_millis(60),
            max_packets: None,
        };
        let mut app = CbrSource::new(tpl, SimTime::from_millis(20), stop);
        let mut out = Vec::new();
        app.on_start(SimTime::ZERO, &mut out);
        let mut now = SimTime::ZERO;
        let mut seqs = Vec::new();
        let mut pending: std::collections::VecDeque<Action> = out.drain(..).collect();
        while let Some(a) = pending.pop_front() {
            match a {
                Action::Timer { at, .. } => {
                    now = at;
                    app.on_timer(now, 0, &mut out);
                    pending.extend(out.drain(..));
                }
                Action::Send(p) => {
                    assert_eq!(p.size_bytes, 40 + 28);
                    seqs.push((p.seq, now));
                }
            }
        }
        assert_eq!(
            seqs,
            vec![
                (0, SimTime::ZERO),
                (1, SimTime::from_millis(20)),
                (2, SimTime::from_millis(40))
            ]
        );
    }
}

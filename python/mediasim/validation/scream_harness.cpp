// A one-flow path around Ericsson's SCReAM sender and receiver (ScreamTx,
// ScreamRx, RtpQueue from github.com/EricssonResearch/scream), for
// mediasim's cross-check (python/mediasim/validation/scream_crosscheck.py).
// Compiled with the reference's own sources; never part of mediasim.
//
// The path: frames of target / fps bytes less their headers (the target
// SCReAM gives is the wire rate; as RFC 8298 section 5 asks of the encoder
// and as mediasim's sources do, a frame's payload is that rate over one
// plus the share the last frame's RTP, UDP and IP headers took of its
// payload) at a fixed frame rate, cut into RTP packets of at most MAX_RTP
// bytes, queued in SCReAM's RTP queue and sent when ScreamTx says
// so; a bottleneck of the capacity in effect (a step schedule), a drop-tail
// queue of QUEUE_BYTES, a one-way delay; the receiver's feedback every
// FB_INTERVAL back over the same delay with no queue. Times in microseconds,
// events in a priority queue (time, order of scheduling).
//
// Arguments: duration_s fps fb_interval_ms one_way_ms queue_bytes
//            min_bps start_bps max_bps then capacity steps as at_s:bps ...
// Output, one line each 100 ms: t_s target_bps sent_bps queue_delay_ms lost
// (sent_bps: wire bytes sent in the last 100 ms; queue_delay_ms: the mean
// bottleneck sojourn, own transmission included, of the packets that left
// it in the last 100 ms, -1 if none; lost: packets dropped so far).

#include "RtpQueue.h"
#include "ScreamRx.h"
#include "ScreamTx.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <queue>
#include <vector>

namespace {

const int MAX_RTP = 1200;      // RTP packet bytes, header included
const int RTP_HEADER = 12;
const int IP_UDP = 28;         // bytes the bottleneck adds to each RTP packet
const uint32_t SSRC = 10;

enum Kind { FRAME, TRY_SEND, TX_DONE, ARRIVE, FEEDBACK_TIMER, FEEDBACK_ARRIVE, LOG };

struct Event {
    uint64_t at;
    uint64_t order;
    Kind kind;
    // ARRIVE: the packet; FEEDBACK_ARRIVE: the feedback's fields.
    uint16_t seq;
    int size;
    uint32_t ts;
    uint64_t ack;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : order > o.order; }
};

struct Packet {
    uint16_t seq;
    int rtp_bytes;
    uint64_t enqueued;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 10) {
        std::fprintf(stderr, "usage: %s duration_s fps fb_interval_ms one_way_ms queue_bytes "
                             "min_bps start_bps max_bps at_s:bps...\n", argv[0]);
        return 2;
    }
    const uint64_t end_us = (uint64_t)(std::atof(argv[1]) * 1e6);
    const double fps = std::atof(argv[2]);
    const uint64_t fb_us = (uint64_t)(std::atof(argv[3]) * 1e3);
    const uint64_t delay_us = (uint64_t)(std::atof(argv[4]) * 1e3);
    const long queue_limit = std::atol(argv[5]);
    const float min_bps = std::atof(argv[6]), start_bps = std::atof(argv[7]), max_bps = std::atof(argv[8]);
    std::vector<std::pair<uint64_t, double>> caps;
    for (int i = 9; i < argc; i++) {
        double at_s = 0, bps = 0;
        if (std::sscanf(argv[i], "%lf:%lf", &at_s, &bps) != 2 || bps <= 0) {
            std::fprintf(stderr, "bad capacity step %s\n", argv[i]);
            return 2;
        }
        caps.push_back({(uint64_t)(at_s * 1e6), bps});
    }
    auto capacity = [&](uint64_t t) {
        double c = caps[0].second;
        for (auto& s : caps)
            if (s.first <= t) c = s.second;
        return c;
    };

    ScreamTx tx;  // RFC 8298-era defaults of the reference code
    ScreamRx rx(1);
    RtpQueue rtp_queue;
    tx.registerNewStream(&rtp_queue, SSRC, 1.0f, min_bps, start_bps, max_bps);

    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
    uint64_t order = 0;
    auto at = [&](uint64_t t, Kind k) {
        Event e{};
        e.at = t;
        e.order = order++;
        e.kind = k;
        q.push(e);
    };
    at(0, FRAME);
    at(fb_us, FEEDBACK_TIMER);
    at(100000, LOG);

    std::deque<Packet> bottleneck;
    long queued_bytes = 0;
    bool busy = false;
    // From 1: the reference never clears packet 0 from its list of packets
    // in flight, and finding it still there when the list (2048 packets)
    // wraps resets the window and the target to their minimum.
    uint16_t next_seq = 1;
    uint64_t next_send = 0;  // ScreamTx's earliest time to ask again
    bool send_armed = false;
    double last_target = start_bps;
    long sent_bytes = 0, lost = 0;
    double overhead_share = 0.0;
    double sojourn_sum_ms = 0;
    long sojourns = 0;

    auto try_send = [&](uint64_t now) {
        while (now >= next_send) {
            uint32_t ssrc = SSRC;
            float r = tx.isOkToTransmit(now, ssrc);
            if (r < 0) return;  // nothing to send, or the window is full
            if (r > 0) {
                // At least 1 us: a float wait that truncates to 0 would ask again at once.
                next_send = now + std::max<uint64_t>(1, (uint64_t)(r * 1e6));
                if (!send_armed) {
                    send_armed = true;
                    at(next_send, TRY_SEND);
                }
                return;
            }
            void* pkt = nullptr;
            int size = 0;
            uint16_t seq = 0;
            if (!rtp_queue.sendPacket(pkt, size, seq)) return;  // the queue was cleared
            float wait = tx.addTransmitted(now, SSRC, size, seq);
            next_send = now + (uint64_t)(wait * 1e6);
            sent_bytes += size + IP_UDP;
            if (queued_bytes + size + IP_UDP > queue_limit) {
                lost++;
            } else {
                bottleneck.push_back({seq, size, now});
                queued_bytes += size + IP_UDP;
                if (!busy) {
                    busy = true;
                    at(now + (uint64_t)((size + IP_UDP) * 8e6 / capacity(now)), TX_DONE);
                }
            }
            if (next_send > now) {
                if (!send_armed) {
                    send_armed = true;
                    at(next_send, TRY_SEND);
                }
                return;
            }
        }
    };

    while (!q.empty()) {
        Event e = q.top();
        q.pop();
        const uint64_t now = e.at;
        if (now > end_us) break;
        switch (e.kind) {
        case FRAME: {
            float t = tx.getTargetBitrate(SSRC);
            if (t > 0) last_target = t;  // -1 flags a loss (a key-frame request)
            int bytes = (int)(last_target / 8.0 / fps / (1.0 + overhead_share));
            int frame_rtp = 0, packets = 0;
            const int frame_payload = bytes;
            while (bytes > 0) {
                int payload = bytes < MAX_RTP - RTP_HEADER ? bytes : MAX_RTP - RTP_HEADER;
                bytes -= payload;
                rtp_queue.push(nullptr, payload + RTP_HEADER, next_seq++, now / 1e6f);
                frame_rtp += payload + RTP_HEADER;
                packets++;
            }
            overhead_share = frame_payload > 0 ? (double)packets * (RTP_HEADER + IP_UDP) / frame_payload : 0.0;
            rtp_queue.setSizeOfLastFrame(frame_rtp);
            tx.newMediaFrame(now, SSRC, frame_rtp);
            try_send(now);
            at(now + (uint64_t)(1e6 / fps), FRAME);
            break;
        }
        case TRY_SEND:
            send_armed = false;
            try_send(now);
            break;
        case TX_DONE: {
            Packet p = bottleneck.front();
            bottleneck.pop_front();
            queued_bytes -= p.rtp_bytes + IP_UDP;
            sojourn_sum_ms += (now - p.enqueued) / 1e3;
            sojourns++;
            Event a{};
            a.at = now + delay_us;
            a.order = order++;
            a.kind = ARRIVE;
            a.seq = p.seq;
            a.size = p.rtp_bytes;
            q.push(a);
            if (!bottleneck.empty()) {
                const Packet& n = bottleneck.front();
                at(now + (uint64_t)((n.rtp_bytes + IP_UDP) * 8e6 / capacity(now)), TX_DONE);
            } else {
                busy = false;
            }
            break;
        }
        case ARRIVE:
            rx.receive(now, nullptr, SSRC, e.size, e.seq);
            break;
        case FEEDBACK_TIMER: {
            uint32_t ssrc = 0, ts = 0;
            uint16_t seq = 0, ce = 0;
            uint64_t ack = 0;
            if (rx.isFeedback(now) && rx.getFeedback(now, ssrc, ts, seq, ack, ce)) {
                Event f{};
                f.at = now + delay_us;
                f.order = order++;
                f.kind = FEEDBACK_ARRIVE;
                f.seq = seq;
                f.ts = ts;
                f.ack = ack;
                q.push(f);
            }
            at(now + fb_us, FEEDBACK_TIMER);
            break;
        }
        case FEEDBACK_ARRIVE:
            tx.incomingFeedback(now, SSRC, e.ts, e.seq, e.ack);
            next_send = now;
            try_send(now);
            break;
        case LOG:
            std::printf("%.1f %.0f %.0f %.3f %ld\n", now / 1e6, last_target, sent_bytes * 8 / 0.1,
                        sojourns ? sojourn_sum_ms / sojourns : -1.0, lost);
            sent_bytes = 0;
            sojourn_sum_ms = 0;
            sojourns = 0;
            at(now + 100000, LOG);
            break;
        }
    }
    return 0;
}

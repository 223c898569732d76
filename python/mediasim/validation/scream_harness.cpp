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
// Arguments and log: path_harness.h (target_bps: SCReAM's target).

#include "RtpQueue.h"
#include "ScreamRx.h"
#include "ScreamTx.h"
#include "path_harness.h"

#include <algorithm>

namespace {

const int MAX_RTP = 1200;      // RTP packet bytes, header included
const int RTP_HEADER = 12;
const uint32_t SSRC = 10;

enum Kind { FRAME, TRY_SEND, TX_DONE, ARRIVE, FEEDBACK_TIMER, FEEDBACK_ARRIVE, LOG };

}  // namespace

int main(int argc, char** argv) {
    path::Args args;
    if (!path::parse(argc, argv, args)) return 2;
    const double fps = args.fps;

    ScreamTx tx;  // RFC 8298-era defaults of the reference code
    ScreamRx rx(1);
    RtpQueue rtp_queue;
    tx.registerNewStream(&rtp_queue, SSRC, 1.0f, args.min_bps, args.start_bps, args.max_bps);

    path::Events q;
    q.at(0, FRAME);
    q.at(args.fb_us, FEEDBACK_TIMER);
    q.at(path::LOG_US, LOG);
    path::Bottleneck bottleneck(args, q, TX_DONE, ARRIVE);

    // From 1: the reference never clears packet 0 from its list of packets
    // in flight, and finding it still there when the list (2048 packets)
    // wraps resets the window and the target to their minimum.
    uint16_t next_seq = 1;
    uint64_t next_send = 0;  // ScreamTx's earliest time to ask again
    bool send_armed = false;
    double last_target = args.start_bps;
    path::Packetiser packetiser(MAX_RTP, RTP_HEADER);

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
                    q.at(next_send, TRY_SEND);
                }
                return;
            }
            void* pkt = nullptr;
            int size = 0;
            uint16_t seq = 0;
            if (!rtp_queue.sendPacket(pkt, size, seq)) return;  // the queue was cleared
            float wait = tx.addTransmitted(now, SSRC, size, seq);
            next_send = now + (uint64_t)(wait * 1e6);
            bottleneck.send(now, seq, size);
            if (next_send > now) {
                if (!send_armed) {
                    send_armed = true;
                    q.at(next_send, TRY_SEND);
                }
                return;
            }
        }
    };

    while (!q.empty()) {
        path::Event e = q.pop();
        const uint64_t now = e.at;
        if (now > args.end_us) break;
        if (path::path_event(e, TX_DONE, LOG, bottleneck, q, last_target)) continue;
        switch (e.kind) {
        case FRAME: {
            float t = tx.getTargetBitrate(SSRC);
            if (t > 0) last_target = t;  // -1 flags a loss (a key-frame request)
            int frame_rtp = packetiser.frame(last_target, fps, [&](int rtp_bytes, bool) {
                rtp_queue.push(nullptr, rtp_bytes, next_seq++, now / 1e6f);
            });
            rtp_queue.setSizeOfLastFrame(frame_rtp);
            tx.newMediaFrame(now, SSRC, frame_rtp);
            try_send(now);
            q.at(now + (uint64_t)(1e6 / fps), FRAME);
            break;
        }
        case TRY_SEND:
            send_armed = false;
            try_send(now);
            break;
        case ARRIVE:
            rx.receive(now, nullptr, SSRC, e.size, e.seq);
            break;
        case FEEDBACK_TIMER: {
            uint32_t ssrc = 0, ts = 0;
            uint16_t seq = 0, ce = 0;
            uint64_t ack = 0;
            if (rx.isFeedback(now) && rx.getFeedback(now, ssrc, ts, seq, ack, ce)) {
                path::Event f = q.make(now + args.delay_us, FEEDBACK_ARRIVE);
                f.seq = seq;
                f.ts = ts;
                f.ack = ack;
                q.push(f);
            }
            q.at(now + args.fb_us, FEEDBACK_TIMER);
            break;
        }
        case FEEDBACK_ARRIVE:
            tx.incomingFeedback(now, SSRC, e.ts, e.seq, e.ack);
            next_send = now;
            try_send(now);
            break;
        }
    }
    return 0;
}

// A one-flow path around Ericsson's SCReAMv2 sender and its receiver
// (ScreamV2Tx, ScreamRx, RtpQueue from github.com/EricssonResearch/scream),
// for mediasim's cross-check of its `version = "v2"`
// (python/mediasim/validation/scream_crosscheck.py, --v2). Compiled with
// the reference's own sources; never part of mediasim.
//
// The path is scream_harness.cpp's (frames of target / fps bytes less their
// headers, cut into RTP packets of at most MAX_RTP bytes, queued in the
// reference's RTP queue and sent when ScreamV2Tx says so; the bottleneck of
// path_harness.h), with SCReAMv2's interfaces: times on the reference's
// clock (the middle 32 bits of an NTP time, 1/65536 s), and the receiver's
// RFC 8888 feedback, as ScreamRx writes it, every FB_INTERVAL back over the
// one-way delay with no queue and read by ScreamV2Tx from its bytes.
//
// The controller's constants are the draft's where the constructor takes
// them (draft-johansson-ccwg-rfc8298bis-screamv2: BETA_LOSS 0.7, BETA_ECN
// 0.8, QDELAY_TARGET_LO 60 ms, PACKET_PACING_HEADROOM 1.5,
// BYTES_IN_FLIGHT_HEAD_ROOM 2, MUL_INCREASE_FACTOR 0.02), as mediasim's
// defaults are, so that what differs is the algorithm. No ECN, no L4S;
// the reference's adaptive pacing-rate scale, its adaptive target-rate
// scale and its frame-size overhead are off (mediasim has none of them).
//
// Arguments and log: path_harness.h (target_bps: SCReAMv2's target).

#include "RtpQueue.h"
#include "ScreamRx.h"
#include "ScreamTx.h"
#include "path_harness.h"

#include <algorithm>
#include <map>
#include <vector>

// What the reference's library expects the program to define: its log
// prefix, and how to free a packet it drops from the RTP queue (the
// harness's packets carry no buffer).
const char* log_tag = "";
void packet_free(void*, uint32_t) {}

namespace {

const int MAX_RTP = 1200;  // RTP packet bytes, header included
const int RTP_HEADER = 12;
const uint32_t SSRC = 10;

enum Kind { FRAME, TRY_SEND, TX_DONE, ARRIVE, FEEDBACK_TIMER, FEEDBACK_ARRIVE, LOG };

// Microseconds on the reference's clock (NTP's middle 32 bits).
uint32_t ntp(uint64_t us) { return (uint32_t)(us * 65536 / 1000000); }

}  // namespace

int main(int argc, char** argv) {
    path::Args args;
    if (!path::parse(argc, argv, args)) return 2;
    const double fps = args.fps;

    ScreamV2Tx tx(0.7f,    // lossBeta: BETA_LOSS
                  0.8f,    // ecnCeBeta: BETA_ECN
                  0.06f,   // queueDelayTargetMin: QDELAY_TARGET_LO
                  0,       // initial cwnd: the reference's own
                  1.5f,    // packetPacingHeadroom: PACKET_PACING_HEADROOM
                  1.0f,    // maxAdaptivePacingRateScale: 1, off
                  2.0f,    // bytesInFlightHeadRoom: BYTES_IN_FLIGHT_HEAD_ROOM
                  0.02f,   // multiplicativeIncreaseScalefactor: MUL_INCREASE_FACTOR
                  false);  // isL4s
    ScreamRx rx(1);
    RtpQueue rtp_queue;
    tx.registerNewStream(&rtp_queue, SSRC, 1.0f, args.min_bps, args.start_bps, args.max_bps,
                         0.1f,    // maxRtpQueueDelay: the reference's default
                         false,   // isAdaptiveTargetRateScale
                         0.0f,    // hysteresis
                         false);  // enableFrameSizeOverhead

    path::Events q;
    q.at(0, FRAME);
    q.at(args.fb_us, FEEDBACK_TIMER);
    q.at(path::LOG_US, LOG);
    path::Bottleneck bottleneck(args, q, TX_DONE, ARRIVE);

    std::map<size_t, std::vector<unsigned char>> feedback;  // in flight, by batch number
    size_t next_batch = 0;
    uint16_t next_seq = 1;
    uint32_t rtp_ts = 0;
    uint64_t next_send = 0;  // ScreamV2Tx's earliest time to ask again
    bool send_armed = false;
    double last_target = args.start_bps;
    path::Packetiser packetiser(MAX_RTP, RTP_HEADER);

    auto arm = [&](uint64_t t) {
        if (!send_armed) {
            send_armed = true;
            q.at(t, TRY_SEND);
        }
    };
    auto try_send = [&](uint64_t now) {
        while (now >= next_send) {
            uint32_t ssrc = SSRC;
            float r = tx.isOkToTransmit(ntp(now), ssrc);
            if (r < 0) return;  // nothing to send, or the window is full
            if (r > 0) {
                // At least 1 us: a float wait that truncates to 0 would ask again at once.
                next_send = now + std::max<uint64_t>(1, (uint64_t)(r * 1e6));
                arm(next_send);
                return;
            }
            void* pkt = nullptr;
            int size = 0;
            uint16_t seq = 0;
            bool mark = false;
            uint32_t ts = 0;
            float queue_delay = rtp_queue.getDelay(now / 1e6f);
            if (!rtp_queue.sendPacket(&pkt, size, ssrc, seq, mark, ts)) return;  // the queue was cleared
            float wait = tx.addTransmitted(ntp(now), SSRC, size, seq, mark, queue_delay, ts);
            next_send = now + (uint64_t)(wait * 1e6);
            bottleneck.send(now, seq, size);
            if (next_send > now) {
                arm(next_send);
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
            float t = tx.getTargetBitrate(ntp(now), SSRC);
            if (t > 0) last_target = t;  // -1 flags a loss (a key-frame request)
            rtp_ts += (uint32_t)(90000 / fps);
            int frame_rtp = packetiser.frame(last_target, fps, [&](int rtp_bytes, bool last) {
                rtp_queue.push(nullptr, rtp_bytes, SSRC, next_seq++, last, now / 1e6f, rtp_ts);
            });
            rtp_queue.setSizeOfLastFrame(frame_rtp);
            tx.newMediaFrame(ntp(now), SSRC, frame_rtp, true);
            next_send = now;  // a new frame: ask at once (the reference's note on newMediaFrame)
            try_send(now);
            q.at(now + (uint64_t)(1e6 / fps), FRAME);
            break;
        }
        case TRY_SEND:
            send_armed = false;
            try_send(now);
            break;
        case ARRIVE:
            rx.receive(ntp(now), nullptr, SSRC, e.size, e.seq, 0, false, 0);
            break;
        case FEEDBACK_TIMER: {
            unsigned char buf[2048];
            int size = 0;
            if (rx.isFeedback(ntp(now)) && rx.createStandardizedFeedback(ntp(now), false, buf, size)) {
                path::Event f = q.make(now + args.delay_us, FEEDBACK_ARRIVE);
                f.batch = next_batch++;
                feedback[f.batch].assign(buf, buf + size);
                q.push(f);
            }
            q.at(now + args.fb_us, FEEDBACK_TIMER);
            break;
        }
        case FEEDBACK_ARRIVE: {
            std::vector<unsigned char> bytes = std::move(feedback[e.batch]);
            feedback.erase(e.batch);
            tx.incomingStandardizedFeedback(ntp(now), bytes.data(), (int)bytes.size());
            next_send = now;
            try_send(now);
            break;
        }
        }
    }
    return 0;
}

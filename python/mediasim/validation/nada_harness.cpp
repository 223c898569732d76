// A one-flow path around Cisco's NADA controller (NadaController and its
// base SenderBasedController, from github.com/cisco/ns3-rmcat, written to
// be independent of ns-3), for mediasim's cross-check
// (python/mediasim/validation/nada_crosscheck.py). Compiled with the
// reference's own sources; never part of mediasim.
//
// The path, as ns3-rmcat's RmcatSender and RmcatReceiver run it: frames
// at a fixed frame rate of r_vin / fps bytes less their headers (as
// mediasim's sources do: a frame's payload is the rate over one plus the
// share the last frame's RTP, UDP and IP headers took of its payload), cut
// into RTP packets of at most MAX_RTP bytes, held in a rate-shaping buffer
// and sent one by one at r_send (each packet waits its payload over r_send
// after the one before; a packet into an empty buffer leaves at once, or
// when the last one's wait ends); r_vin and r_send are taken from the
// controller's reference rate at each feedback, with ns3-rmcat's BETA_V =
// BETA_S = 0 (r_vin = r_send = r_ref). A bottleneck of the capacity in
// effect (a step schedule), a drop-tail queue of QUEUE_BYTES, a one-way
// delay; the receiver reports every packet it got (sequence, arrival
// time) in a batch every FB_INTERVAL back over the same delay with no
// queue. ns3-rmcat's sender adds a random oversleep of 0-1% to each
// packet's wait; this harness does not (it would only add noise). Times
// in microseconds, events in a priority queue (time, order of scheduling).
//
// Arguments and log: path_harness.h (target_bps: r_vin).

#include "nada-controller.h"
#include "path_harness.h"

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

namespace {

const int MAX_RTP = 1200;  // RTP packet bytes, header included
const int RTP_HEADER = 12;

enum Kind { FRAME, SEND, TX_DONE, ARRIVE, FEEDBACK_TIMER, FEEDBACK_ARRIVE, LOG };

void quiet(const std::string&) {}

}  // namespace

int main(int argc, char** argv) {
    path::Args args;
    if (!path::parse(argc, argv, args)) return 2;
    const double fps = args.fps;
    const float min_bps = args.min_bps, max_bps = args.max_bps;

    rmcat::NadaController nada;  // ns3-rmcat's constants (RFC 8698's Figure 3)
    nada.setMinBw(min_bps);
    nada.setMaxBw(max_bps);
    nada.setInitBw(args.start_bps);
    nada.reset();                 // takes the initial rate (and clears the log callback)
    nada.setLogCallback(quiet);
    float r_vin = args.start_bps, r_send = args.start_bps;

    path::Events q;
    q.at(0, FRAME);
    q.at(args.fb_us, FEEDBACK_TIMER);
    q.at(path::LOG_US, LOG);
    path::Bottleneck bottleneck(args, q, TX_DONE, ARRIVE);

    std::deque<int> shaping;  // RTP bytes of each packet waiting to be sent
    bool send_armed = false;
    uint64_t next_send = 0;   // when the last packet's wait ends
    uint16_t next_seq = 0;
    std::vector<rmcat::SenderBasedController::FeedbackItem> pending;
    std::vector<std::vector<rmcat::SenderBasedController::FeedbackItem>> batches;
    path::Packetiser packetiser(MAX_RTP, RTP_HEADER);

    auto send_one = [&](uint64_t now) {
        const int size = shaping.front();
        shaping.pop_front();
        const uint16_t seq = next_seq++;
        // ns3-rmcat's sender counts a packet's payload, its codec's output, both
        // to the controller and in its wait; the RTP header is added after.
        const int payload = size - RTP_HEADER;
        nada.processSendPacket(now, seq, payload);
        bottleneck.send(now, seq, size);
        next_send = now + (uint64_t)(payload * 8e6 / r_send);
        if (!shaping.empty()) {
            send_armed = true;
            q.at(next_send, SEND);
        }
    };

    while (!q.empty()) {
        path::Event e = q.pop();
        const uint64_t now = e.at;
        if (now > args.end_us) break;
        if (path::path_event(e, TX_DONE, LOG, bottleneck, q, r_vin)) continue;
        switch (e.kind) {
        case FRAME: {
            packetiser.frame(r_vin, fps, [&](int rtp_bytes, bool) { shaping.push_back(rtp_bytes); });
            if (!send_armed && !shaping.empty()) {
                if (now >= next_send) {
                    send_one(now);
                } else {
                    send_armed = true;
                    q.at(next_send, SEND);
                }
            }
            q.at(now + (uint64_t)(1e6 / fps), FRAME);
            break;
        }
        case SEND:
            send_armed = false;
            if (!shaping.empty()) send_one(now);
            break;
        case ARRIVE:
            pending.push_back({e.seq, now, 0});
            break;
        case FEEDBACK_TIMER: {
            if (!pending.empty()) {
                batches.push_back(pending);
                pending.clear();
                path::Event f = q.make(now + args.delay_us, FEEDBACK_ARRIVE);
                f.batch = batches.size() - 1;
                q.push(f);
            }
            q.at(now + args.fb_us, FEEDBACK_TIMER);
            break;
        }
        case FEEDBACK_ARRIVE:
            nada.processFeedbackBatch(now, batches[e.batch]);
            batches[e.batch].clear();
            // RmcatSender::CalcBufferParams with BETA_V = BETA_S = 0.
            r_vin = std::max(min_bps, nada.getBandwidth(now));
            r_send = std::min(max_bps, nada.getBandwidth(now));
            break;
        }
    }
    return 0;
}

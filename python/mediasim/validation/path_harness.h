// The path of mediasim's closed-loop controller cross-checks, shared by the
// harnesses around a reference's controller (scream_harness.cpp,
// nada_harness.cpp; see python/mediasim/validation/media_loop.py): the
// arguments, an event queue, and the bottleneck (a capacity step schedule,
// a drop-tail queue of QUEUE_BYTES, then the one-way delay) with the 100 ms
// log line. Header-only; never part of mediasim.
//
// Arguments: duration_s fps fb_interval_ms one_way_ms queue_bytes
//            min_bps start_bps max_bps then capacity steps as at_s:bps ...
//            and, optionally, loss=P seed=N: each packet that leaves the
//            queue is lost with probability P (as a mediasim link's
//            `packet` loss model, which drops on arrival), drawn from
//            splitmix64 seeded with N (0 if not given).
// Log, one line each 100 ms: t_s target_bps sent_bps queue_delay_ms lost
// (sent_bps: wire bytes sent in the last 100 ms; queue_delay_ms: the mean
// bottleneck sojourn, own transmission included, of the packets that left
// it in the last 100 ms, -1 if none; lost: packets dropped so far).

#ifndef MEDIASIM_PATH_HARNESS_H
#define MEDIASIM_PATH_HARNESS_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <queue>
#include <utility>
#include <vector>

namespace path {

const int IP_UDP = 28;  // bytes the bottleneck adds to each RTP packet
const uint64_t LOG_US = 100000;

struct Args {
    uint64_t end_us;
    double fps;
    uint64_t fb_us;
    uint64_t delay_us;
    long queue_limit;
    float min_bps, start_bps, max_bps;
    std::vector<std::pair<uint64_t, double>> caps;
    double loss = 0;
    uint64_t seed = 0;

    double capacity(uint64_t t) const {
        double c = caps[0].second;
        for (auto& s : caps)
            if (s.first <= t) c = s.second;
        return c;
    }
};

// false (after saying why) if the arguments are not those above.
inline bool parse(int argc, char** argv, Args& a) {
    if (argc < 10) {
        std::fprintf(stderr, "usage: %s duration_s fps fb_interval_ms one_way_ms queue_bytes "
                             "min_bps start_bps max_bps at_s:bps...\n", argv[0]);
        return false;
    }
    a.end_us = (uint64_t)(std::atof(argv[1]) * 1e6);
    a.fps = std::atof(argv[2]);
    a.fb_us = (uint64_t)(std::atof(argv[3]) * 1e3);
    a.delay_us = (uint64_t)(std::atof(argv[4]) * 1e3);
    a.queue_limit = std::atol(argv[5]);
    a.min_bps = std::atof(argv[6]);
    a.start_bps = std::atof(argv[7]);
    a.max_bps = std::atof(argv[8]);
    for (int i = 9; i < argc; i++) {
        if (std::sscanf(argv[i], "loss=%lf", &a.loss) == 1) {
            if (a.loss < 0 || a.loss >= 1) {
                std::fprintf(stderr, "bad loss %s (0 <= P < 1)\n", argv[i]);
                return false;
            }
            continue;
        }
        unsigned long long seed = 0;
        if (std::sscanf(argv[i], "seed=%llu", &seed) == 1) {
            a.seed = seed;
            continue;
        }
        double at_s = 0, bps = 0;
        if (std::sscanf(argv[i], "%lf:%lf", &at_s, &bps) != 2 || bps <= 0) {
            std::fprintf(stderr, "bad capacity step %s\n", argv[i]);
            return false;
        }
        a.caps.push_back({(uint64_t)(at_s * 1e6), bps});
    }
    if (a.caps.empty()) {
        std::fprintf(stderr, "no capacity step\n");
        return false;
    }
    return true;
}

// An event of a harness's own kinds (int), in time order, then in the
// order scheduled. The fields a kind needs ride along.
struct Event {
    uint64_t at;
    uint64_t order;
    int kind;
    uint16_t seq;
    int size;
    uint32_t ts;
    uint64_t ack;
    size_t batch;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : order > o.order; }
};

class Events {
public:
    // A new event of `kind` at `t`, to fill in and `push`.
    Event make(uint64_t t, int kind) {
        Event e{};
        e.at = t;
        e.order = order_++;
        e.kind = kind;
        return e;
    }
    void push(const Event& e) { q_.push(e); }
    void at(uint64_t t, int kind) { push(make(t, kind)); }
    bool empty() const { return q_.empty(); }
    Event pop() {
        Event e = q_.top();
        q_.pop();
        return e;
    }

private:
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
    uint64_t order_ = 0;
};

// The bottleneck: what is sent enters its drop-tail queue, leaves at the
// capacity in effect, and arrives (an event of kind `arrive`) after the
// one-way delay. Counts what the log line reports.
class Bottleneck {
public:
    Bottleneck(const Args& a, Events& ev, int tx_done, int arrive)
        : a_(a), ev_(ev), tx_done_(tx_done), arrive_(arrive), rng_(a.seed) {}

    // A packet of `rtp_bytes` sent at `now`: queued, or dropped if the queue is full.
    void send(uint64_t now, uint16_t seq, int rtp_bytes) {
        sent_bytes_ += rtp_bytes + IP_UDP;
        if (queued_bytes_ + rtp_bytes + IP_UDP > a_.queue_limit) {
            lost_++;
            return;
        }
        queue_.push_back({seq, rtp_bytes, now});
        queued_bytes_ += rtp_bytes + IP_UDP;
        if (!busy_) {
            busy_ = true;
            ev_.at(now + wire_us(rtp_bytes, now), tx_done_);
        }
    }

    // The head packet's last bit left at `now`: it arrives after the
    // one-way delay, or is lost (counted; its sojourn is not, as in
    // mediasim's figures, which are those of packets received).
    void tx_done(uint64_t now) {
        Packet p = queue_.front();
        queue_.pop_front();
        queued_bytes_ -= p.rtp_bytes + IP_UDP;
        if (a_.loss > 0 && uniform() < a_.loss) {
            lost_++;
        } else {
            sojourn_sum_ms_ += (now - p.enqueued) / 1e3;
            sojourns_++;
            Event a = ev_.make(now + a_.delay_us, arrive_);
            a.seq = p.seq;
            a.size = p.rtp_bytes;
            ev_.push(a);
        }
        if (!queue_.empty()) {
            ev_.at(now + wire_us(queue_.front().rtp_bytes, now), tx_done_);
        } else {
            busy_ = false;
        }
    }

    // The log line at `now` with the sender's target, and a new 100 ms.
    void log(uint64_t now, double target_bps) {
        std::printf("%.1f %.0f %.0f %.3f %ld\n", now / 1e6, target_bps, sent_bytes_ * 8 / (LOG_US / 1e6),
                    sojourns_ ? sojourn_sum_ms_ / sojourns_ : -1.0, lost_);
        sent_bytes_ = 0;
        sojourn_sum_ms_ = 0;
        sojourns_ = 0;
    }

private:
    struct Packet {
        uint16_t seq;
        int rtp_bytes;
        uint64_t enqueued;
    };
    // splitmix64's next value as a double in [0, 1).
    double uniform() {
        uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;  // 2^53
    }
    uint64_t wire_us(int rtp_bytes, uint64_t now) const {
        return (uint64_t)((rtp_bytes + IP_UDP) * 8e6 / a_.capacity(now));
    }

    const Args& a_;
    Events& ev_;
    int tx_done_, arrive_;
    std::deque<Packet> queue_;
    long queued_bytes_ = 0;
    bool busy_ = false;
    long sent_bytes_ = 0, lost_ = 0;
    double sojourn_sum_ms_ = 0;
    long sojourns_ = 0;
    uint64_t rng_;
};

// A sender's frames: target_bps / fps bytes less the share the last
// frame's RTP, UDP and IP headers took of its payload (the target is the
// wire rate, which RFC 8298 section 5 has the encoder compensate for, as
// mediasim's sources do), cut into RTP packets of at most `max_rtp` bytes.
class Packetiser {
public:
    Packetiser(int max_rtp, int rtp_header) : max_rtp_(max_rtp), rtp_header_(rtp_header) {}

    // One frame at `target_bps`: `push(rtp_bytes, last)` for each of its
    // packets in order; returns the frame's RTP bytes.
    template <class Push>
    int frame(double target_bps, double fps, Push push) {
        int bytes = (int)(target_bps / 8.0 / fps / (1.0 + overhead_share_));
        const int frame_payload = bytes;
        int frame_rtp = 0, packets = 0;
        while (bytes > 0) {
            int payload = bytes < max_rtp_ - rtp_header_ ? bytes : max_rtp_ - rtp_header_;
            bytes -= payload;
            push(payload + rtp_header_, bytes == 0);
            frame_rtp += payload + rtp_header_;
            packets++;
        }
        overhead_share_ = frame_payload > 0 ? (double)packets * (rtp_header_ + IP_UDP) / frame_payload : 0.0;
        return frame_rtp;
    }

private:
    int max_rtp_, rtp_header_;
    double overhead_share_ = 0.0;
};

// The events every harness handles alike, of its kinds `tx_done` and
// `log`: the bottleneck's transmission ends, and the 100 ms log line with
// the sender's `target_bps`. true if `e` was one of them.
inline bool path_event(const Event& e, int tx_done, int log, Bottleneck& b, Events& q, double target_bps) {
    if (e.kind == tx_done) {
        b.tx_done(e.at);
        return true;
    }
    if (e.kind == log) {
        b.log(e.at, target_bps);
        q.at(e.at + LOG_US, log);
        return true;
    }
    return false;
}

}  // namespace path

#endif

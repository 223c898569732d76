"""The cross-check dumbbell in ns-3, run by an interpreter that has the
`ns3` package (``pip install ns3``). Standalone: it does not import
mediasim. Usage: python ns3_dumbbell.py N newreno|sack DURATION_S [RED]

Prints lines: "run_s <wall seconds of Simulator::Run>", "btx <bottleneck bytes incl. PPP header>", "rx <i> <bytes>",
"cw <i> <time_s> <cwnd_packets>". With RED given as
"MIN_TH:MAX_TH:W_Q:MAX_P:GENTLE:WAIT" (0/1 for the flags) the bottleneck
runs ns-3's RedQueueDisc (100 packets, 1000-byte mean packet size, no
limited transmit), and the script also prints "qdrops <packets dropped by
the queue disc>" and "qlen <mean of the queue disc's length sampled every
10 ms>" (RedQueueDisc does not expose its average).
"""

import os
import sys

from ns import ns

CODE = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
#include <sstream>
#include <map>
#include <chrono>
using namespace ns3;

static std::ostringstream g_out;
static uint64_t g_btx = 0;
static std::map<uint32_t, uint32_t> g_flow_of_node;

static void MsCwnd(std::string ctx, uint32_t, uint32_t v) {
  auto a = ctx.find("/NodeList/") + 10;
  auto b = ctx.find('/', a);
  uint32_t id = std::stoul(ctx.substr(a, b - a));
  g_out << "cw " << g_flow_of_node[id] << " " << Simulator::Now().GetSeconds() << " " << v / 960.0 << "\n";
}
static bool g_trace_cwnd = true;
static void MsConnect(uint32_t id) {
  if (!g_trace_cwnd) return;
  std::ostringstream p;
  p << "/NodeList/" << id << "/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow";
  Config::Connect(p.str(), MakeCallback(&MsCwnd));
}
static void MsTx(Ptr<const Packet> p) { g_btx += p->GetSize(); }
static Ptr<QueueDisc> g_red;
static double g_qlen_sum = 0;
static uint64_t g_qlen_n = 0;
static void MsSampleQueue() {
  g_qlen_sum += g_red->GetCurrentSize().GetValue();
  g_qlen_n++;
  Simulator::Schedule(MilliSeconds(10), &MsSampleQueue);
}

std::string MsRunDumbbell(int n, bool sack, double duration, bool red, double min_th, double max_th,
                          double w_q, double max_p, bool gentle, bool wait) {
  // Each call starts afresh (the speed benchmark calls it several times).
  g_out.str("");
  g_btx = 0;
  g_flow_of_node.clear();
  g_qlen_sum = 0;
  g_qlen_n = 0;
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpNewReno"));
  Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(960));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(0.1)));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 24));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(0.2)));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));

  NodeContainer r, cs, cd, s, d;
  r.Create(2); cs.Create(1); cd.Create(1); s.Create(n); d.Create(n);
  InternetStackHelper stack;
  stack.InstallAll();
  PointToPointHelper bn, acc;
  bn.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
  bn.SetChannelAttribute("Delay", StringValue("20ms"));
  bn.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("100p"));
  acc.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
  acc.SetChannelAttribute("Delay", StringValue("1ms"));
  acc.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));
  Ipv4AddressHelper addr;
  TrafficControlHelper tch;
  uint32_t k = 0;
  auto link = [&](PointToPointHelper& h, Ptr<Node> a, Ptr<Node> b) {
    NetDeviceContainer dev = h.Install(a, b);
    std::ostringstream net;
    net << "10." << (k / 250) << "." << (k % 250) << ".0";
    k++;
    addr.SetBase(net.str().c_str(), "255.255.255.0");
    Ipv4InterfaceContainer ifc = addr.Assign(dev);
    tch.Uninstall(dev);  // no queue disc: the device's drop-tail queue is the queue
    return std::make_pair(dev, ifc);
  };
  if (red) {
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    bn.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
  }
  auto bott = link(bn, r.Get(0), r.Get(1));
  if (red) {
    TrafficControlHelper rt;
    rt.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", DoubleValue(min_th), "MaxTh", DoubleValue(max_th),
                        "QW", DoubleValue(w_q), "LInterm", DoubleValue(1.0 / max_p), "Gentle", BooleanValue(gentle),
                        "Wait", BooleanValue(wait), "MaxSize", StringValue("100p"),
                        "MeanPktSize", UintegerValue(1000), "LinkBandwidth", StringValue("10Mbps"),
                        "LinkDelay", StringValue("20ms"));
    QueueDiscContainer qd = rt.Install(bott.first.Get(0));
    g_red = qd.Get(0);
    Simulator::Schedule(Seconds(0), &MsSampleQueue);
  }
  bott.first.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&MsTx));
  link(acc, cs.Get(0), r.Get(0));
  auto cdl = link(acc, r.Get(1), cd.Get(0));
  std::vector<Ipv4Address> dst;
  for (int i = 0; i < n; i++) {
    link(acc, s.Get(i), r.Get(0));
    auto dl = link(acc, r.Get(1), d.Get(i));
    dst.push_back(dl.second.GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  OnOffHelper onoff("ns3::UdpSocketFactory", InetSocketAddress(cdl.second.GetAddress(1), 9));
  onoff.SetConstantRate(DataRate("1Mbps"), 972);
  onoff.Install(cs.Get(0)).Start(Seconds(0.0));
  PacketSinkHelper udpsink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
  udpsink.Install(cd.Get(0));

  ApplicationContainer sinks;
  for (int i = 0; i < n; i++) {
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(dst[i], 5000));
    bulk.SetAttribute("MaxBytes", UintegerValue(0));
    bulk.SetAttribute("SendSize", UintegerValue(960));
    bulk.Install(s.Get(i)).Start(Seconds(0.0));
    PacketSinkHelper ps("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 5000));
    sinks.Add(ps.Install(d.Get(i)));
    g_flow_of_node[s.Get(i)->GetId()] = i;
    Simulator::Schedule(Seconds(0.0001), &MsConnect, s.Get(i)->GetId());
  }
  Simulator::Stop(Seconds(duration));
  auto t0 = std::chrono::steady_clock::now();
  Simulator::Run();
  g_out << "run_s " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << "\n";
  g_out << "btx " << g_btx << "\n";
  if (red) {
    g_out << "qdrops " << g_red->GetStats().nTotalDroppedPackets << "\n";
    g_out << "qlen " << g_qlen_sum / g_qlen_n << "\n";
  }
  for (int i = 0; i < n; i++) {
    g_out << "rx " << i << " " << DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx() << "\n";
  }
  Simulator::Destroy();
  return g_out.str();
}
"""


def main() -> None:
    n, flavor, duration = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    red = [float(x) for x in sys.argv[4].split(":")] if len(sys.argv) > 4 else None
    ns.cppyy.cppdef(CODE)
    if os.environ.get("MEDIASIM_NS3_NO_CWND_TRACE"):
        # (the speed benchmark: no per-ACK trace output inside Simulator::Run)
        ns.cppyy.gbl.g_trace_cwnd = False
    # MEDIASIM_NS3_REPEATS=k (the speed benchmark): k runs in this process,
    # after one compilation; a "run_s" line for each, the rest from the first.
    outs = []
    for _ in range(int(os.environ.get("MEDIASIM_NS3_REPEATS", "1"))):
        if red:
            out = ns.cppyy.gbl.MsRunDumbbell(n, flavor == "sack", duration, True, red[0], red[1], red[2], red[3],
                                             bool(red[4]), bool(red[5]))
        else:
            out = ns.cppyy.gbl.MsRunDumbbell(n, flavor == "sack", duration, False, 0, 0, 0, 1, False, False)
        outs.append(str(out))
    later = [line for o in outs[1:] for line in o.splitlines(keepends=True) if line.startswith("run_s")]
    sys.stdout.write(outs[0] + "".join(later))


if __name__ == "__main__":
    main()

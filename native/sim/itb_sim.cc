// itb-sim: one repetition of an ITB timeline in ns-3 (docs/simulation.md).
//
//   itb-sim CONFIG OUTDIR
//
// CONFIG is written by itb.backends.sim (one record per line, fields separated by
// spaces, "-" for none). OUTDIR receives what the real testbed's programs write, in
// their formats, so that ITB's analysis reads a simulated repetition as an emulated one:
//   nodes/<dst>/<id>.recv.csv|json    flow recv's goodput log and summary
//   nodes/<src>/<id>.send.csv|json    flow send's tcp_info-like log and summary
//   emulator/<link>/linkem-ab.csv|ba  linkem's per-interval log of an emulated link
// Every date is base_ns + the simulated time in ns (the engine's clock, as if real).
//
// How the network is modelled (each point a difference from the testbed, stated):
// - a link is a point-to-point link per direction at its rate, with an interframe gap of
//   12 bytes, so that a frame occupies the link for (IP packet + 14 bytes) · 8 / rate as
//   an Ethernet frame does in linkem (ns-3 puts a 2-byte PPP header on the IP packet);
//   an unlimited direction runs at 100 Gbit/s;
// - its delay is the channel's (one value: a link whose two directions differ is
//   refused by the Python side);
// - its queue is the device's drop-tail queue in packets or bytes (bytes scaled by
//   (MTU + 2) / (MTU + 14): the same number of full frames as linkem's byte limit); no
//   queueing discipline is installed (no hidden 1000-packet queue);
// - loss is drawn per packet at the receiving end of a direction: Bernoulli or
//   Gilbert-Elliott, as linkem's;
// - TCP is ns-3's, with Linux's defaults: MSS = MTU − 52 (timestamps), initial window 10,
//   minimum RTO 200 ms, delayed ACKs every 2 segments (every one where the testbed acks
//   every segment: `delack 1`) or 40 ms, one segment per packet (no GSO), SACK, Linux's PRR
//   recovery (recovery.h: ns-3.44's own wraps around in 32 bits),
//   pacing only where a rate caps the sender (as Linux's internal pacing with
//   SO_MAX_PACING_RATE); the congestion control is ns-3's model named in the config;
// - a receiver offers Linux's window (rcv_window.h: from tcp_rmem[1], autotuned as the
//   reader takes data) unless the testbed opens it (open_receive_window: the buffer).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include "linux_cc.h"
#include "rcv_window.h"
#include "recovery.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;
namespace fs = std::filesystem;

static int64_t g_base_ns = 0;
static std::string g_out;
// receivers' windows as Linux's (rcv_window.h; config `rcvwin linux RMEM_DEFAULT RMEM_MAX`);
// else ns-3's: the whole buffer from the first ACK
static bool g_rcvwin_linux = false;
static int64_t g_rmem_default = 131072, g_rmem_max = 131072;
// segments per delayed ACK: 2 (Linux's rule for a bulk receiver, as ns-3's DelAckCount),
// 1 when the testbed acks every segment (config `delack 1`: the quickack route metric)
static uint32_t g_delack_count = 2;

static int64_t
now_ns()
{
    return g_base_ns + Simulator::Now().GetNanoSeconds();
}

static std::string
opt_int(int64_t v, bool has)
{
    return has ? std::to_string(v) : "null";
}

[[noreturn]] static void
die(const std::string& why)
{
    std::cerr << "itb-sim: " << why << std::endl;
    std::exit(2);
}

static Ptr<TcpCongestionOps> make_cc(const std::string& name);

#include "udp.h"

// --- the configuration ------------------------------------------------------------

struct Dir
{
    int64_t rate_bps = -1; // -1: unlimited
    int64_t delay_us = 0;
    int64_t queue_bytes = -1;
    int64_t queue_packets = -1;
    std::string loss = "none";
    double p = 0, r = 1, loss_good = 0, loss_bad = 1;
};

struct LinkCfg
{
    std::string name;
    bool emulated = false;
    std::string a, a_addr, b, b_addr;
    int mtu = 1500;
    Dir ab, ba;
};

struct Step
{
    int64_t t_us;
    int64_t rate_bps;
};

struct TcpCfg
{
    std::string id, src, dst, dst_addr, cc, enforce;
    int64_t at_us = 0, volume = 0, rate_bps = 0, buffer = 0;
    int streams = 1, port = 0;
    double headroom = 0;
    std::vector<Step> profile;
    bool wait = true; // the run ends when the awaited transfers and timers are done
    // a ping-pong (flow's --pingpong): `count` messages of `size` bytes, each answered by
    // `reply` bytes before the next is written; the volume is size × count
    int64_t count = 0, size = 0, reply = 0;
};

struct TimerCfg // a `sleep SECONDS` command: it only waits
{
    std::string id;
    int64_t at_us = 0, length_us = 0;
    bool wait = true;
};

struct SetCfg
{
    std::string id, link, dir;
    int64_t at_us = 0, rate_bps = -2, delay_us = -1;
};

static int64_t
num(const std::string& s)
{
    return s == "-" ? -1 : std::stoll(s);
}

// A link direction in the schema linkem reads (native/linkem/direction-format.json): every
// field there and none other (a field renamed there is refused here, naming it).
static const char* const DIRECTION_FIELDS[] = {"rate_bps", "delay_us", "queue_bytes",
                                               "queue_packets", "loss"};
static const char* const LOSS_FIELDS[] = {"model", "p", "r", "loss_good", "loss_bad"};

static void
only_fields(const nlohmann::json& j, const char* const* names, size_t n, const std::string& what)
{
    if (!j.is_object())
    {
        die(what + " must be a JSON object");
    }
    for (const auto& item : j.items())
    {
        if (std::find_if(names, names + n, [&](const char* f) { return item.key() == f; }) ==
            names + n)
        {
            die(what + ": unknown field " + item.key());
        }
    }
    for (size_t i = 0; i < n; i++)
    {
        if (!j.contains(names[i]))
        {
            die(what + ": missing field " + names[i]);
        }
    }
}

static int64_t
int_or_null(const nlohmann::json& v)
{
    return v.is_null() ? -1 : v.get<int64_t>();
}

static Dir
read_dir(const nlohmann::json& j, const std::string& what)
{
    only_fields(j, DIRECTION_FIELDS, std::size(DIRECTION_FIELDS), what);
    const auto& loss = j.at("loss");
    only_fields(loss, LOSS_FIELDS, std::size(LOSS_FIELDS), what + ".loss");
    Dir d;
    d.rate_bps = int_or_null(j.at("rate_bps"));
    d.delay_us = j.at("delay_us").get<int64_t>();
    d.queue_bytes = int_or_null(j.at("queue_bytes"));
    d.queue_packets = int_or_null(j.at("queue_packets"));
    d.loss = loss.at("model").get<std::string>();
    d.p = loss.at("p").get<double>();
    d.r = loss.at("r").get<double>();
    d.loss_good = loss.at("loss_good").get<double>();
    d.loss_bad = loss.at("loss_bad").get<double>();
    return d;
}

// `link` and one JSON object: its name, ends, MTU and directions (itb.backends.sim.config).
static LinkCfg
read_link(const std::string& text)
{
    nlohmann::json j;
    try
    {
        j = nlohmann::json::parse(text);
        LinkCfg l;
        l.name = j.at("name").get<std::string>();
        l.emulated = j.at("emulated").get<bool>();
        l.a = j.at("a").get<std::string>();
        l.a_addr = j.at("a_addr").get<std::string>();
        l.b = j.at("b").get<std::string>();
        l.b_addr = j.at("b_addr").get<std::string>();
        l.mtu = j.at("mtu").get<int>();
        l.ab = read_dir(j.at("ab"), "link " + l.name + " ab");
        l.ba = read_dir(j.at("ba"), "link " + l.name + " ba");
        return l;
    }
    catch (const nlohmann::json::exception& e)
    {
        die(std::string("link ") + text.substr(0, 80) + ": " + e.what());
    }
    return {};
}

// --- Gilbert-Elliott loss, as linkem's -----------------------------------------------

class GeErrorModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ItbGeErrorModel").SetParent<ErrorModel>();
        return tid;
    }

    GeErrorModel(const Dir& d)
        : m_d(d)
    {
        m_u = CreateObject<UniformRandomVariable>();
    }

  private:
    bool DoCorrupt(Ptr<Packet>) override
    {
        if (m_d.loss == "bernoulli")
        {
            return m_u->GetValue() < m_d.p;
        }
        // the state moves, then the packet is lost with the new state's probability
        if (m_bad ? m_u->GetValue() < m_d.r : m_u->GetValue() < m_d.p)
        {
            m_bad = !m_bad;
        }
        return m_u->GetValue() < (m_bad ? m_d.loss_bad : m_d.loss_good);
    }

    void DoReset() override
    {
    }

    Dir m_d;
    bool m_bad = false;
    Ptr<UniformRandomVariable> m_u;
};

// --- a link direction's log, as linkem's ---------------------------------------------

struct DirLog
{
    std::ofstream f;
    Ptr<Queue<Packet>> queue;
    double scale = 1.0; // the queue's bytes as linkem's frame bytes
    uint64_t bytes = 0, packets = 0, drops_queue = 0, drops_loss = 0, qmax = 0;

    void sample(int64_t interval_ns)
    {
        uint64_t q = queue ? (uint64_t)std::llround(queue->GetNBytes() * scale) : 0;
        qmax = std::max(qmax, q);
        f << now_ns() << ',' << bytes << ',' << packets << ',' << drops_queue << ','
          << drops_loss << ',' << q << ',' << qmax << ",0,0\n";
        bytes = packets = drops_queue = drops_loss = 0;
        qmax = q;
        Simulator::Schedule(NanoSeconds(interval_ns), &DirLog::sample, this, interval_ns);
    }
};

// --- the sockets: ns-3's, with the pacing cap reachable -------------------------------

class ItbSocket : public TcpSocketBase
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ItbSocket").SetParent<TcpSocketBase>().AddConstructor<ItbSocket>();
        return tid;
    }

    void Cap(int64_t bps)
    {
        m_tcb->m_pacing = bps > 0;
        m_tcb->m_maxPacingRate = DataRate(bps > 0 ? bps : 4000000000ULL);
    }

    uint32_t Cwnd() const
    {
        return m_tcb->GetCwndInSegments();
    }

    int64_t Ssthresh() const
    {
        return m_tcb->m_ssThresh >= 0x7fffffffU ? int64_t{-1}
                                                : int64_t{m_tcb->GetSsThreshInSegments()};
    }

    Time Srtt() const
    {
        return m_tcb->m_srtt;
    }

    Time RttVar() const
    {
        return m_rtt->GetVariation();
    }

    uint64_t PacingBps() const
    {
        return m_tcb->m_pacing ? m_tcb->m_pacingRate.Get().GetBitRate() : 0;
    }

    uint32_t Unacked() const
    {
        return m_tcb->m_bytesInFlight / m_tcb->m_segmentSize;
    }

    uint32_t Mss() const
    {
        return m_tcb->m_segmentSize;
    }

    uint64_t Unsent() const // written and not yet sent (Linux's tcpi_notsent_bytes)
    {
        return m_txBuffer->SizeFromSequence(m_tcb->m_nextTxSequence);
    }

    std::string StateName() const
    {
        return TcpSocket::TcpStateName[m_state];
    }

    std::string CaName() const
    {
        static const char* names[] = {"Open", "Disorder", "CWR", "Recovery", "Loss"};
        int s = m_tcb->m_congState;
        return s >= 0 && s < 5 ? names[s] : "Open";
    }

    uint64_t Acked() const // payload bytes acknowledged (+1 for the SYN, as Linux's)
    {
        return AckedAt(m_highRxAckMark.Get());
    }

    uint64_t AckedAt(SequenceNumber32 ack) const
    {
        return (uint32_t)(ack.GetValue() - m_isn.GetValue());
    }

    void MarkStart() // the ACK of the SYN: what Acked() counts from, less one
    {
        m_isn = m_highRxAckMark.Get() - 1;
    }

    Ptr<TcpCongestionOps> Cc() const
    {
        return m_congestionControl;
    }

    // Linux's code learns of every segment sent (linux_cc.cc): the date, and how full
    // the window is then (after it)
    void CountSent()
    {
        TraceConnectWithoutContext(
            "Tx",
            MakeCallback(+[](ItbSocket* s,
                             Ptr<const Packet> p,
                             const TcpHeader& h,
                             Ptr<const TcpSocketBase>) {
                s->m_payloadSent += p->GetSize();
                s->Sent(h.GetSequenceNumber() + p->GetSize());
            }).Bind(this));
    }

    void Sent(SequenceNumber32 end)
    {
        SequenceNumber32 nxt = std::max(m_tcb->m_highTxMark.Get(), end);
        LinuxCcSent(m_congestionControl,
                    m_txBuffer->BytesInFlight(),
                    m_tcb->m_cWnd.Get(),
                    m_tcb->m_segmentSize,
                    m_txBuffer->HeadSequence().GetValue(),
                    nxt.GetValue(),
                    end.GetValue());
    }

    void LinuxWindow(uint32_t mss) // Linux's receive window (rcv_window.h) from now on
    {
        m_linuxRcv = true;
        m_rw.Init(g_rmem_default, g_rmem_max, mss);
    }

    Ptr<Packet> Recv(uint32_t maxSize, uint32_t flags) override
    {
        Ptr<Packet> p = TcpSocketBase::Recv(maxSize, flags);
        if (m_linuxRcv && p && p->GetSize() > 0)
        {
            m_copied += p->GetSize();
            const auto& rx = m_tcb->m_rxBuffer;
            m_rw.Read(Simulator::Now().GetMicroSeconds(),
                      m_copied,
                      rx->Available(),
                      rx->Size() - rx->Available());
        }
        return p;
    }

  protected:
    Ptr<TcpSocketBase> Fork() override // an accepted socket: an ItbSocket too, its cc forked
    {
        return CopyObject<ItbSocket>(this);
    }

    static uint32_t Echo(const TcpHeader& h)
    {
        return h.HasOption(TcpOption::TS)
                   ? DynamicCast<const TcpOptionTS>(h.GetOption(TcpOption::TS))->GetEcho()
                   : 0;
    }

    // the handshake's end: the receiver's measures start (tcp_init_buffer_space)
    void DoForwardUp(Ptr<Packet> packet, const Address& from, const Address& to) override
    {
        if (!m_linuxRcv || m_state == ESTABLISHED)
        {
            TcpSocketBase::DoForwardUp(packet, from, to);
            return;
        }
        TcpHeader h;
        packet->PeekHeader(h);
        TcpSocketBase::DoForwardUp(packet, from, to);
        if (m_state == ESTABLISHED && !m_rw.established)
        {
            m_rw.Establish(Simulator::Now().GetMicroSeconds(),
                           Echo(h),
                           m_copied,
                           m_tcb->m_rxBuffer->NextRxSequence().GetValue());
            m_rw.port = m_endPoint ? m_endPoint->GetLocalPort() : 0;
        }
    }

    // a data segment, before it is queued and ACKed: the receiver's RTT, its rcv_ssthresh
    void ReceivedData(Ptr<Packet> p, const TcpHeader& h) override
    {
        if (m_linuxRcv && m_rw.established && p->GetSize() > 0)
        {
            const auto& rx = m_tcb->m_rxBuffer;
            m_rw.Data(TcpOptionTS::NowToTsValue(),
                      Echo(h),
                      p->GetSize(),
                      rx->Size() + p->GetSize(),
                      rx->Available() == 0);
        }
        TcpSocketBase::ReceivedData(p, h);
    }

    uint16_t AdvertisedWindowSize(bool scale = true) const override
    {
        if (!m_linuxRcv)
        {
            return TcpSocketBase::AdvertisedWindowSize(scale);
        }
        auto& rw = const_cast<LinuxRcvWindow&>(m_rw); // offering a window is its record
        if (!scale) // SYN, SYN-ACK
        {
            return (uint16_t)std::min<int64_t>(rw.rcv_wnd, 65535);
        }
        int64_t w = rw.rcv_wnd;
        if (!m_tcb->m_rxBuffer->GotFin())
        {
            rw.wscale = m_rcvWindShift;
            w = rw.Select(m_tcb->m_rxBuffer->NextRxSequence().GetValue(),
                          m_tcb->m_rxBuffer->Size());
        }
        return (uint16_t)std::min<int64_t>(w >> m_rcvWindShift, m_maxWinSize);
    }

  public:

    SequenceNumber32 m_isn{0};
    uint64_t m_payloadSent = 0; // payload bytes sent, retransmissions included (tcpi_bytes_sent)
    bool m_linuxRcv = false;
    LinuxRcvWindow m_rw;
    uint64_t m_copied = 0; // bytes the application read
};

// A socket as TcpL4Protocol::CreateSocket makes one, with the congestion control named.
static Ptr<ItbSocket>
make_socket(Ptr<Node> node, Ptr<TcpL4Protocol> tcp, const std::string& cc, uint32_t mss)
{
    Ptr<ItbSocket> s = CreateObject<ItbSocket>();
    s->SetNode(node);
    s->SetTcp(tcp);
    ObjectFactory rtt;
    rtt.SetTypeId(RttMeanDeviation::GetTypeId());
    s->SetRtt(rtt.Create<RttEstimator>());
    s->SetCongestionControlAlgorithm(make_cc(cc));
    s->CountSent();
    // Linux's PRR (recovery.h); ns-3's own when ITB_SIM_NS3_PRR is set (tests: its
    // arithmetic wraps, tests/sim/test_sim_fidelity.py)
    static const bool ns3_prr = std::getenv("ITB_SIM_NS3_PRR") != nullptr;
    s->SetRecoveryAlgorithm(ns3_prr ? Ptr<TcpRecoveryOps>(CreateObject<TcpPrrRecovery>())
                                    : Ptr<TcpRecoveryOps>(CreateObject<LinuxPrrRecovery>()));
    s->SetAttribute("SegmentSize", UintegerValue(mss));
    if (g_rcvwin_linux)
    {
        s->LinuxWindow(mss);
    }
    tcp->AddSocket(s);
    return s;
}

// --- the receiver: flow recv (and a ping-pong's echo) ---------------------------------

struct Receiver
{
    TcpCfg cfg;
    std::ofstream log;
    Ptr<Socket> listener;
    std::vector<uint64_t> per_stream;
    std::map<Socket*, size_t> index;
    int open = 0, accepted = 0, closed = 0;
    uint64_t total = 0, interval_bytes = 0;
    int64_t first_ns = -1, last_ns = -1, accept_ns = -1;
    int64_t interval_ns = 100000000;
    bool done = false;
    EventId tick;
    std::function<void()> on_done;
    uint64_t in_message = 0, owed = 0, messages = 0; // an echo's
    std::set<Socket*> reading;               // sockets with a read scheduled
    std::map<Socket*, int64_t> last_read_us; // when each last read
    static constexpr uint32_t READ_SIZE = 131072;
    uint32_t segment = 1448; // the path's MSS

    void Start(Ptr<Node> node, uint32_t mss)
    {
        segment = mss;
        if (cfg.count > 0) // an echo answers with the ping-pong's congestion control
        {
            Ptr<ItbSocket> s = make_socket(node, node->GetObject<TcpL4Protocol>(), cfg.cc, mss);
            s->Cap(cfg.rate_bps);
            listener = s;
        }
        else if (g_rcvwin_linux) // an ItbSocket for its receive window (it sends no data)
        {
            listener = make_socket(node, node->GetObject<TcpL4Protocol>(), cfg.cc, mss);
        }
        else
        {
            listener = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        }
        listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), cfg.port));
        listener->Listen();
        listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&Receiver::Accept, this));
    }

    void Accept(Ptr<Socket> s, const Address&)
    {
        index[PeekPointer(s)] = per_stream.size();
        per_stream.push_back(0);
        if (cfg.count > 0)
        {
            DynamicCast<ItbSocket>(s)->CountSent(); // (a fork: its own cc, not yet told)
            s->SetSendCallback(MakeCallback(&Receiver::Room, this));
        }
        s->SetRecvCallback(MakeCallback(&Receiver::Arrived, this));
        s->SetCloseCallbacks(MakeCallback(&Receiver::Closed, this),
                             MakeCallback(&Receiver::Reset, this));
        open++;
        if (accepted++ == 0)
        {
            accept_ns = now_ns();
            tick = Simulator::Schedule(NanoSeconds(interval_ns), &Receiver::Row, this);
        }
    }

    // data arrived. With Linux's receive window, flow recv reads it as the testbed's does
    // (measured: raw_tp on tcp_rcv_space_adjust, 2026-12-07; tcp_rcvbuf_grow, 2026-12-08):
    // after the ACK the arrival caused (the kernel ACKs, then wakes the reader); a reader
    // that has slept over READER_IDLE_US wakes READER_WAKE_US late and its first read takes
    // what woke it and what came meanwhile but the last READER_UNREAD_MAX_SEGMENTS, still
    // unread when that read's autotuning measures (6-10 segments at 500 Mbit/s on the
    // testbed, 0-18 at 5 Gbit/s, where a round trip's whole burst arrives within the lag:
    // left unread it would hold the window at its first size, which the testbed's does not);
    // an awake reader reads at once, in reads of 128 kB (flow recv's --read-size). An echo
    // (flow recv --pingpong) reads at once.
    static constexpr int64_t READER_IDLE_US = 1000, READER_WAKE_US = 200;
    static constexpr uint32_t READER_UNREAD_MAX_SEGMENTS = 10;

    void Arrived(Ptr<Socket> s)
    {
        if (!g_rcvwin_linux || cfg.count > 0) // (an echo: as it always did, at once)
        {
            Read(s);
            return;
        }
        if (!reading.insert(PeekPointer(s)).second)
        {
            return; // a read is due: it takes this too
        }
        int64_t now = Simulator::Now().GetMicroSeconds();
        auto it = last_read_us.find(PeekPointer(s));
        bool asleep = it == last_read_us.end() || now - it->second > READER_IDLE_US;
        if (asleep)
        {
            Simulator::Schedule(MicroSeconds(READER_WAKE_US),
                                &Receiver::Woken,
                                this,
                                s,
                                s->GetRxAvailable());
        }
        else
        {
            Simulator::ScheduleNow(&Receiver::Deferred, this, s);
        }
    }

    void Woken(Ptr<Socket> s, uint32_t first) // the first read: what woke the reader, and
    {                                         // what came meanwhile but the last arrivals
        uint32_t avail = s->GetRxAvailable();
        uint32_t unread = READER_UNREAD_MAX_SEGMENTS * segment;
        Consume(s, s->Recv(std::max(first, avail > unread ? avail - unread : 0u), 0));
        Simulator::ScheduleNow(&Receiver::Deferred, this, s); // (it records the read's date)
    }

    void Deferred(Ptr<Socket> s)
    {
        reading.erase(PeekPointer(s));
        last_read_us[PeekPointer(s)] = Simulator::Now().GetMicroSeconds();
        Read(s);
    }

    void Read(Ptr<Socket> s)
    {
        while (Consume(s, s->Recv(READ_SIZE, 0)))
        {
        }
        if (owed > 0)
        {
            Room(s, 0);
        }
    }

    bool Consume(Ptr<Socket> s, Ptr<Packet> p) // bytes read: counted; false if none
    {
        if (!p || p->GetSize() == 0)
        {
            return false;
        }
        uint32_t n = p->GetSize();
        if (first_ns < 0)
        {
            first_ns = now_ns();
        }
        last_ns = now_ns();
        total += n;
        interval_bytes += n;
        per_stream[index[PeekPointer(s)]] += n;
        in_message += cfg.count > 0 ? n : 0; // an echo owes an answer per whole message
        while (cfg.count > 0 && in_message >= (uint64_t)cfg.size)
        {
            in_message -= cfg.size;
            owed += cfg.reply;
            messages++;
        }
        return true;
    }

    void Room(Ptr<Socket> s, uint32_t) // an echo writes what it owes
    {
        while (owed > 0)
        {
            uint64_t want = std::min<uint64_t>({owed, s->GetTxAvailable(), 262144});
            int sent = want ? s->Send(Create<Packet>(want), 0) : 0;
            if (sent <= 0)
            {
                return;
            }
            owed -= sent;
        }
    }

    void Closed(Ptr<Socket> s)
    {
        Read(s);
        s->Close();
        open--;
        if (++closed == cfg.streams)
        {
            Finish("");
        }
    }

    void Reset(Ptr<Socket> s)
    {
        Read(s);
        open--;
        Finish("the connection was reset");
    }

    void Row()
    {
        log << now_ns() << ',' << interval_bytes << ',' << open << '\n';
        interval_bytes = 0;
        tick = Simulator::Schedule(NanoSeconds(interval_ns), &Receiver::Row, this);
    }

    void Finish(const std::string& error)
    {
        if (done)
        {
            return;
        }
        done = true;
        tick.Cancel();
        if (accept_ns >= 0)
        {
            log << now_ns() << ',' << interval_bytes << ',' << open << '\n';
        }
        log.close();
        bool ok = error.empty() && total == (uint64_t)cfg.volume;
        std::string err = !error.empty()       ? error
                          : ok                 ? ""
                                               : "received " + std::to_string(total) +
                                     " bytes, expected " + std::to_string(cfg.volume);
        std::ofstream j(g_out + "/nodes/" + cfg.dst + "/" + cfg.id + ".recv.json");
        j << "{\"format\": 1, \"role\": \"recv\", \"streams\": " << cfg.streams
          << ", \"bytes\": " << total << ", \"per_stream_bytes\": [";
        for (size_t k = 0; k < per_stream.size(); k++)
        {
            j << (k ? ", " : "") << per_stream[k];
        }
        double gp = (last_ns > first_ns && first_ns >= 0)
                        ? total * 8e9 / (double)(last_ns - first_ns)
                        : -1;
        j << "], \"first_byte_ns\": " << opt_int(first_ns, first_ns >= 0)
          << ", \"last_byte_ns\": " << opt_int(last_ns, last_ns >= 0)
          << ", \"accept_ns\": " << opt_int(accept_ns, accept_ns >= 0)
          << ", \"expected_bytes\": " << cfg.volume << ", \"goodput_bps\": "
          << (gp >= 0 ? std::to_string(gp) : "null")
          << ", \"messages\": " << (cfg.count > 0 ? std::to_string(messages) : "null")
          << ", \"cpu\": null, \"ok\": " << (ok ? "true" : "false")
          << ", \"error\": " << (err.empty() ? "null" : "\"" + err + "\"") << "}\n";
        if (on_done)
        {
            on_done();
        }
    }
};

// --- the sender: flow send ------------------------------------------------------------

struct Stream
{
    Ptr<ItbSocket> s;
    uint64_t share = 0, written = 0;
    bool connected = false, done = false;
};

struct Sender
{
    TcpCfg cfg;
    std::ofstream log;
    std::vector<Stream> streams;
    int64_t start_ns = -1, connect_ns = -1, end_ns = -1, interval_ns = 100000000;
    uint64_t sent_bytes = 0, segments = 0, data_segments = 0, retrans_bytes = 0,
             retrans_segs = 0, header_bytes = 0;
    int connected = 0, finished = 0;
    bool done = false, started = false, writes_keep_profile = false;
    std::vector<std::pair<int64_t, int64_t>> rate_changes;
    int64_t in_force = 0; // the profile's rate the pacing follows now (bit/s, before headroom)
    size_t applied = 0;   // the last profile step applied to the pacing
    std::string cc_in_use;
    EventId tick, refill;
    std::function<void()> on_done;
    // a ping-pong's: echo bytes read, messages answered, the current one's write date and
    // the round trips' min, sum and max (ns)
    uint64_t echoed = 0;
    int64_t answered = 0, sent_ns = -1, rtt_min = -1, rtt_max = 0;
    double rtt_sum = 0;

    // the payload the profile allows from its date 0 (the start) until now
    double Allowed() const
    {
        double t = (now_ns() - start_ns) / 1e9, bits = 0;
        for (size_t k = 0; k < cfg.profile.size(); k++)
        {
            double a = cfg.profile[k].t_us / 1e6;
            double b = k + 1 < cfg.profile.size() ? cfg.profile[k + 1].t_us / 1e6 : 1e18;
            if (t <= a)
            {
                break;
            }
            bits += (std::min(t, b) - a) * cfg.profile[k].rate_bps;
        }
        return bits / 8;
    }

    void Start(Ptr<Node> node, Ptr<TcpL4Protocol> tcp, uint32_t mss)
    {
        started = true;
        int n = cfg.streams;
        for (int k = 0; k < n; k++)
        {
            Stream st;
            st.share = cfg.volume / n + (k == n - 1 ? cfg.volume % n : 0);
            Ptr<ItbSocket> s = make_socket(node, tcp, cfg.cc, mss);
            Ptr<TcpCongestionOps> cc = s->Cc();
            cc_in_use = cfg.cc.rfind("ns3:", 0) == 0 ? "ns3::" + cc->GetName() : cc->GetName();
            int64_t cap = FirstCap();
            s->Cap(cap > 0 ? cap / n : 0);
            s->Bind();
            s->SetConnectCallback(MakeCallback(&Sender::Connected, this),
                                  MakeCallback(&Sender::Failed, this));
            s->SetSendCallback(MakeCallback(&Sender::Room, this));
            s->TraceConnectWithoutContext("Tx", MakeCallback(&Sender::Tx, this));
            s->TraceConnectWithoutContext("Retransmission",
                                          MakeCallback(&Sender::Retrans, this));
            s->TraceConnectWithoutContext("HighestRxAck",
                                          MakeCallback(&Sender::Acked, this).Bind((size_t)k));
            if (cfg.count > 0)
            {
                s->SetRecvCallback(MakeCallback(&Sender::Echo, this));
            }
            st.s = s;
            streams.push_back(st);
            s->Connect(InetSocketAddress(Ipv4Address(cfg.dst_addr.c_str()), cfg.port));
        }
        bool pauses = false;
        for (auto& st : cfg.profile)
        {
            pauses |= st.rate_bps == 0;
        }
        writes_keep_profile = !cfg.profile.empty() && (cfg.enforce == "application" || pauses ||
                                                        cfg.headroom > 0);
        if (cfg.count == 0) // a ping-pong's log is one row per message (Echo)
        {
            tick = Simulator::Schedule(NanoSeconds(interval_ns), &Sender::Row, this);
        }
    }

    // every stream connected: they are let go (flow's start_ns, the profile's date 0)
    void Go()
    {
        start_ns = sent_ns = now_ns();
        in_force = cfg.profile.empty() ? 0 : cfg.profile[0].rate_bps;
        for (size_t k = 1; k < cfg.profile.size(); k++)
        {
            Simulator::Schedule(MicroSeconds(cfg.profile[k].t_us), &Sender::Step, this, k);
        }
        RefillAll();
    }

    int64_t Paced(int64_t bps) const // the profile's rate with the headroom, as flow's
    {
        return (int64_t)std::ceil(bps * (1 + cfg.headroom));
    }

    int64_t FirstCap() const
    {
        if (cfg.enforce == "application" || cfg.enforce == "tbf")
        {
            return 0;
        }
        if (!cfg.profile.empty())
        {
            return Paced(cfg.profile[0].rate_bps);
        }
        return cfg.rate_bps;
    }

    // flow's timer thread: a step's rate at its date. With headroom (the writes keep the
    // profile), a step down waits until what was written before its date has left at the
    // pacing in force, at most until the next step (flow's backlog_sent)
    void Step(size_t k)
    {
        int64_t r = cfg.profile[k].rate_bps;
        if (r == 0) // a pause keeps the previous pacing
        {
            rate_changes.push_back({now_ns(), 0});
        }
        else if (cfg.enforce != "application" && cfg.headroom > 0 && r < in_force)
        {
            BacklogSent(k);
        }
        else
        {
            Apply(k);
        }
        RefillAll();
    }

    void BacklogSent(size_t k)
    {
        if (done || applied > k)
        {
            return;
        }
        int64_t next = k + 1 < cfg.profile.size()
                           ? start_ns + cfg.profile[k + 1].t_us * 1000
                           : std::numeric_limits<int64_t>::max();
        // bytes/s per socket, as flow's pacing_per_socket
        auto per = [&](int64_t bps) { return std::max<int64_t>(Paced(bps) / 8 / cfg.streams, 1); };
        uint64_t most = 0;
        for (auto& st : streams)
        {
            most = std::max(most, st.s->Unsent());
        }
        int64_t now = now_ns();
        if (most <= (uint64_t)(per(cfg.profile[k].rate_bps) / 500 + 2 * 1448) || now >= next)
        {
            Apply(k);
            return;
        }
        int64_t wait = std::max<int64_t>(
            (int64_t)std::ceil(most * 1e9 / (double)per(in_force)), 1000000);
        Simulator::Schedule(NanoSeconds(std::min(wait, next - now)), &Sender::BacklogSent, this, k);
    }

    void Apply(size_t k)
    {
        if (applied > k) // a later step came first
        {
            return;
        }
        applied = k;
        int64_t r = cfg.profile[k].rate_bps;
        int64_t paced = Paced(r);
        rate_changes.push_back({now_ns(), paced}); // as flow's: the rate its pacing follows
        if (cfg.enforce != "application")
        {
            for (auto& st : streams)
            {
                st.s->Cap(paced / cfg.streams);
            }
        }
        in_force = r;
    }

    Stream* Find(Socket* s)
    {
        for (auto& st : streams)
        {
            if (PeekPointer(st.s) == s)
            {
                return &st;
            }
        }
        return nullptr;
    }

    void Connected(Ptr<Socket> s)
    {
        Stream* st = Find(PeekPointer(s));
        st->connected = true;
        st->s->MarkStart();
        if (++connected == cfg.streams)
        {
            connect_ns = now_ns();
            Go();
        }
    }

    void Failed(Ptr<Socket>)
    {
        Finish("connection failed");
    }

    void Room(Ptr<Socket> s, uint32_t)
    {
        Stream* st = Find(PeekPointer(s));
        if (!st || start_ns < 0 || done)
        {
            return;
        }
        // a ping-pong writes one message at a time
        uint64_t end = cfg.count > 0 ? std::min<uint64_t>(st->share, (answered + 1) * cfg.size)
                                     : st->share;
        while (st->written < end)
        {
            uint64_t want = std::min<uint64_t>(end - st->written, s->GetTxAvailable());
            if (writes_keep_profile)
            {
                double mine = Allowed() / cfg.streams;
                want = std::min<uint64_t>(want, mine > st->written ? mine - st->written : 0);
                if (want == 0)
                {
                    refill.Cancel();
                    refill = Simulator::Schedule(MilliSeconds(1), &Sender::RefillAll, this);
                    return;
                }
            }
            if (want == 0)
            {
                return;
            }
            want = std::min<uint64_t>(want, 262144);
            int sent = s->Send(Create<Packet>(want), 0);
            if (sent <= 0)
            {
                return;
            }
            st->written += sent;
        }
    }

    void RefillAll()
    {
        for (auto& st : streams)
        {
            Room(st.s, 0);
        }
    }

    void Tx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        segments++;
        header_bytes += 20 + 20 + h.GetSerializedSize() - 20;
        if (p->GetSize() > 0)
        {
            data_segments++;
            sent_bytes += p->GetSize();
        }
    }

    void Retrans(Ptr<const Packet> p, const TcpHeader&, const Address&, const Address&,
                 Ptr<const TcpSocketBase>)
    {
        retrans_bytes += p->GetSize();
        retrans_segs++;
    }

    // (a traced value calls back before it takes the new value: `ack` is the new one)
    void Acked(size_t k, SequenceNumber32, SequenceNumber32 ack)
    {
        Stream& st = streams[k];
        if (cfg.count == 0 && !st.done && st.connected && st.s->AckedAt(ack) >= st.share + 1)
        {
            st.done = true;
            Simulator::ScheduleNow(&Socket::Close, st.s);
            if (++finished == cfg.streams)
            {
                Simulator::ScheduleNow(&Sender::Finish, this, std::string());
            }
        }
    }

    // a ping-pong's answers: a message is done when its whole answer is read
    void Echo(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        while ((p = s->Recv()) && p->GetSize() > 0)
        {
            echoed += p->GetSize();
        }
        while (!done && answered < cfg.count && echoed >= (uint64_t)(answered + 1) * cfg.reply)
        {
            int64_t now = now_ns(), rtt = now - sent_ns;
            log << answered << ',' << sent_ns << ',' << now << '\n';
            rtt_min = rtt_min < 0 ? rtt : std::min(rtt_min, rtt);
            rtt_max = std::max(rtt_max, rtt);
            rtt_sum += rtt;
            sent_ns = now;
            if (++answered == cfg.count)
            {
                streams[0].done = true;
                Simulator::ScheduleNow(&Socket::Close, streams[0].s);
                Simulator::ScheduleNow(&Sender::Finish, this, std::string());
                return;
            }
        }
        Room(s, 0);
    }

    void Row()
    {
        for (size_t k = 0; k < streams.size(); k++)
        {
            Sample(k);
        }
        tick = Simulator::Schedule(NanoSeconds(interval_ns), &Sender::Row, this);
    }

    void Sample(size_t k)
    {
        ItbSocket& s = *streams[k].s;
        if (!streams[k].connected)
        {
            return;
        }
        int64_t ss = s.Ssthresh();
        uint64_t pace = s.PacingBps();
        log << now_ns() << ',' << k << ',' << s.Acked() << ',' << s.m_payloadSent << ','
            << s.Cwnd() << ','
            << (ss >= 0 ? std::to_string(ss) : "") << ',' << s.Srtt().GetMicroSeconds() << ','
            << s.RttVar().GetMicroSeconds() << ',' << retrans_segs << ','
            << (pace ? std::to_string(pace) : "") << ",," << s.Mss() << ',' << s.Unacked()
            << ',' << s.StateName() << ',' << s.CaName() << '\n';
    }

    void Finish(const std::string& error)
    {
        if (done)
        {
            return;
        }
        done = true;
        end_ns = error.empty() ? now_ns() : -1;
        tick.Cancel();
        refill.Cancel();
        for (size_t k = 0; cfg.count == 0 && k < streams.size(); k++)
        {
            Sample(k);
        }
        log.close();
        double gp = end_ns > start_ns && start_ns >= 0
                        ? cfg.volume * 8e9 / (double)(end_ns - start_ns)
                        : -1;
        std::ofstream j(g_out + "/nodes/" + cfg.src + "/" + cfg.id + ".send.json");
        j << "{\"format\": 1, \"role\": \"send\", \"streams\": " << cfg.streams << ", \"cc\": \""
          << cfg.cc << "\", \"cc_in_use\": \"" << cc_in_use << "\", \"bytes\": " << cfg.volume
          << ", \"start_ns\": " << opt_int(start_ns, start_ns >= 0) << ", \"end_ns\": " << opt_int(end_ns, end_ns >= 0)
          << ", \"connect_ns\": " << opt_int(connect_ns, connect_ns >= 0)
          << ", \"goodput_bps\": " << (gp >= 0 ? std::to_string(gp) : "null")
          << ", \"total_retrans\": " << retrans_segs << ", \"sent\": {\"bytes\": " << sent_bytes
          << ", \"retrans_bytes\": " << retrans_bytes << ", \"segments\": " << segments
          << ", \"data_segments\": " << data_segments << ", \"header_bytes\": " << header_bytes
          << "}, \"rate_bps\": " << (cfg.rate_bps > 0 ? std::to_string(cfg.rate_bps) : "null")
          << ", \"rate_changes\": [";
        for (size_t k = 0; k < rate_changes.size(); k++)
        {
            j << (k ? ", " : "") << "[" << rate_changes[k].first << ", "
              << rate_changes[k].second << "]";
        }
        j << "], \"profile\": " << (cfg.profile.empty() ? "null" : "true")
          << ", \"enforce\": \"" << cfg.enforce
          << "\", \"messages\": " << (cfg.count > 0 ? std::to_string(answered) : "null")
          << ", \"rtt_ns\": "
          << (answered > 0 ? "{\"min\": " + std::to_string(rtt_min) + ", \"mean\": " +
                                 std::to_string((int64_t)(rtt_sum / answered)) +
                                 ", \"max\": " + std::to_string(rtt_max) + "}"
                           : std::string("null"))
          << ", \"cpu\": null, \"ok\": "
          << (error.empty() ? "true" : "false")
          << ", \"error\": " << (error.empty() ? "null" : "\"" + error + "\"") << "}\n";
        if (on_done)
        {
            on_done();
        }
    }
};

// --- the whole repetition -------------------------------------------------------------

// A canonical name runs Linux's own code (linux_cc.cc); "ns3:<model>" ns-3's model.
static Ptr<TcpCongestionOps>
make_cc(const std::string& name)
{
    if (name.rfind("ns3:", 0) == 0)
    {
        TypeId t;
        if (!TypeId::LookupByNameFailSafe("ns3::" + name.substr(4), &t))
        {
            die("ns-3 has no congestion control ns3::" + name.substr(4));
        }
        ObjectFactory f;
        f.SetTypeId(t);
        return f.Create<TcpCongestionOps>();
    }
    Ptr<TcpCongestionOps> cc = LinuxCc(name);
    if (!cc)
    {
        die("no Linux code for congestion control " + name + " is linked in");
    }
    return cc;
}

static std::pair<Ipv4Address, Ipv4Mask>
cidr(const std::string& s)
{
    auto slash = s.find('/');
    int len = std::stoi(s.substr(slash + 1));
    uint32_t mask = len == 0 ? 0 : 0xffffffffU << (32 - len);
    return {Ipv4Address(s.substr(0, slash).c_str()), Ipv4Mask(mask)};
}

static uint32_t
add_interface(Ptr<Node> n, Ptr<NetDevice> d, const std::string& addr)
{
    Ptr<Ipv4> ip = n->GetObject<Ipv4>();
    int32_t i = ip->AddInterface(d);
    auto [a, m] = cidr(addr);
    ip->AddAddress(i, Ipv4InterfaceAddress(a, m));
    ip->SetMetric(i, 1);
    ip->SetUp(i);
    return i;
}

int
main(int argc, char** argv)
{
    if (argc == 2 && std::string(argv[1]) == "--direction-fields")
    {
        // what it reads of a link direction, for the test against the schema
        nlohmann::json f = {{"direction", DIRECTION_FIELDS}, {"loss", LOSS_FIELDS}};
        std::cout << f.dump() << std::endl;
        return 0;
    }
    if (argc != 3)
    {
        die("usage: itb-sim CONFIG OUTDIR (or itb-sim --direction-fields)");
    }
    std::ifstream in(argv[1]);
    if (!in)
    {
        die(std::string("cannot read ") + argv[1]);
    }
    g_out = argv[2];
    int64_t duration_us = 0, interval_us = 100000, emu_interval_us = 1000;
    uint64_t seed = 1, run = 1;
    std::vector<std::string> node_names;
    std::vector<LinkCfg> links;
    std::vector<TcpCfg> tcps;
    std::vector<SetCfg> sets;
    std::vector<TimerCfg> timers;
    std::vector<UdpCfg> udps;
    std::string line;
    while (std::getline(in, line))
    {
        std::istringstream ls(line);
        std::string kind;
        if (!(ls >> kind))
        {
            continue;
        }
        if (kind == "run")
        {
            ls >> g_base_ns >> duration_us >> interval_us >> emu_interval_us >> seed >> run;
        }
        else if (kind == "rcvwin") // rcvwin linux RMEM_DEFAULT RMEM_MAX
        {
            std::string how;
            ls >> how >> g_rmem_default >> g_rmem_max;
            g_rcvwin_linux = how == "linux";
        }
        else if (kind == "delack") // delack SEGMENTS
        {
            ls >> g_delack_count;
            if (g_delack_count < 1)
            {
                die("delack needs at least one segment");
            }
        }
        else if (kind == "node")
        {
            std::string n;
            ls >> n;
            node_names.push_back(n);
        }
        else if (kind == "link")
        {
            std::string rest;
            std::getline(ls, rest);
            links.push_back(read_link(rest));
        }
        else if (kind == "tcp")
        {
            TcpCfg t;
            std::string rate, prof, buf;
            ls >> t.id >> t.src >> t.dst >> t.dst_addr >> t.port >> t.at_us >> t.volume >>
                t.streams >> t.cc >> rate >> prof >> t.enforce >> t.headroom >> buf;
            int wait = 1;
            ls >> wait;
            t.wait = wait != 0;
            t.rate_bps = std::max<int64_t>(0, num(rate));
            t.buffer = num(buf);
            if (prof != "-")
            {
                std::istringstream ps(prof);
                std::string step;
                while (std::getline(ps, step, ','))
                {
                    auto c = step.find(':');
                    t.profile.push_back({std::stoll(step.substr(0, c)),
                                         std::stoll(step.substr(c + 1))});
                }
            }
            tcps.push_back(t);
        }
        else if (kind == "pingpong")
        {
            TcpCfg t;
            std::string rate, buf;
            int wait = 1;
            ls >> t.id >> t.src >> t.dst >> t.dst_addr >> t.port >> t.at_us >> t.size >>
                t.reply >> t.count >> t.cc >> rate >> buf >> wait;
            t.volume = t.size * t.count;
            t.enforce = "pacing";
            t.wait = wait != 0;
            t.rate_bps = std::max<int64_t>(0, num(rate));
            t.buffer = num(buf);
            if (t.size <= 0 || t.reply <= 0 || t.count <= 0)
            {
                die("pingpong " + t.id + ": size, reply and count must be positive");
            }
            tcps.push_back(t);
        }
        else if (kind == "udp")
        {
            UdpCfg u;
            std::string arrivals;
            int wait = 1;
            ls >> u.id >> u.src >> u.dst >> u.dst_addr >> u.port >> u.at_us >> u.rate_bps >>
                u.duration_us >> u.size >> arrivals >> u.seed >> wait >> u.drain_us;
            u.poisson = arrivals == "poisson";
            u.wait = wait != 0;
            if (u.rate_bps <= 0 || u.size == 0 || u.duration_us < 0)
            {
                die("udp " + u.id + ": rate, size and duration must be positive");
            }
            udps.push_back(u);
        }
        else if (kind == "timer")
        {
            TimerCfg t;
            int wait = 1;
            ls >> t.id >> t.at_us >> t.length_us >> wait;
            t.wait = wait != 0;
            timers.push_back(t);
        }
        else if (kind == "set")
        {
            SetCfg s;
            std::string rate, delay;
            ls >> s.id >> s.at_us >> s.link >> s.dir >> rate >> delay;
            s.rate_bps = rate == "-" ? -2 : (rate == "inf" ? -1 : std::stoll(rate));
            s.delay_us = num(delay);
            sets.push_back(s);
        }
        else
        {
            die("unknown record " + kind);
        }
    }
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(g_delack_count));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    // Linux's RTO: SRTT + max(4 RTTVAR, tcp_rto_min), its 200 ms floor on the variance
    // term (tcp_set_rto: rttvar_us >= tcp_rto_min_us), where ns-3's floors the whole RTO
    // (max(SRTT + 4 RTTVAR, MinRto)): at 200 ms of RTT ns-3's RTO was ~210 ms and fired
    // whenever a filling queue delayed an ACK burst. ns-3's ClockGranularity is that
    // floor: RTO = max(SRTT + max(ClockGranularity, 4 RTTVAR), MinRto). ns-3's own rule
    // when ITB_SIM_NS3_RTO is set (tests/sim/test_sim_fidelity.py).
    if (std::getenv("ITB_SIM_NS3_RTO") == nullptr)
    {
        Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
                           TimeValue(MilliSeconds(200)));
    }
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketState::PaceInitialWindow", BooleanValue(false));
    int mtu = links.empty() ? 1500 : links[0].mtu;
    uint32_t mss = mtu - 52;
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    int64_t buffer = 4 << 20;
    for (auto& t : tcps)
    {
        buffer = std::max(buffer, t.buffer);
    }
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buffer));

    std::map<std::string, Ptr<Node>> nodes;
    InternetStackHelper stack;
    for (auto& n : node_names)
    {
        nodes[n] = CreateObject<Node>();
        stack.Install(nodes[n]);
    }
    std::vector<std::unique_ptr<DirLog>> dir_logs;
    std::map<std::string, std::pair<Ptr<PointToPointNetDevice>, Ptr<PointToPointNetDevice>>>
        devs;
    std::map<std::string, Ptr<PointToPointChannel>> chans;
    for (auto& l : links)
    {
        if (!nodes.count(l.a) || !nodes.count(l.b))
        {
            die("link " + l.name + " joins an unknown node");
        }
        auto dev = [&](const Dir& d) {
            Ptr<PointToPointNetDevice> x = CreateObject<PointToPointNetDevice>();
            x->SetAddress(Mac48Address::Allocate());
            int64_t rate = d.rate_bps > 0 ? d.rate_bps : 100000000000LL;
            x->SetDataRate(DataRate(rate));
            x->SetAttribute("InterframeGap", TimeValue(NanoSeconds(12 * 8 * 1e9 / rate)));
            x->SetMtu(l.mtu);
            Ptr<DropTailQueue<Packet>> q = CreateObject<DropTailQueue<Packet>>();
            if (d.queue_packets > 0)
            {
                q->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, d.queue_packets));
            }
            else if (d.queue_bytes > 0)
            {
                q->SetMaxSize(QueueSize(QueueSizeUnit::BYTES,
                                        d.queue_bytes * (l.mtu + 2) / (l.mtu + 14)));
            }
            else
            {
                q->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1000000));
            }
            x->SetQueue(q);
            return x;
        };
        Ptr<PointToPointNetDevice> da = dev(l.ab), db = dev(l.ba);
        nodes[l.a]->AddDevice(da);
        nodes[l.b]->AddDevice(db);
        Ptr<PointToPointChannel> ch = CreateObject<PointToPointChannel>();
        ch->SetAttribute("Delay", TimeValue(MicroSeconds(l.ab.delay_us)));
        da->Attach(ch);
        db->Attach(ch);
        add_interface(nodes[l.a], da, l.a_addr);
        add_interface(nodes[l.b], db, l.b_addr);
        if (l.ab.loss != "none")
        {
            db->SetReceiveErrorModel(Create<GeErrorModel>(l.ab));
        }
        if (l.ba.loss != "none")
        {
            da->SetReceiveErrorModel(Create<GeErrorModel>(l.ba));
        }
        devs[l.name] = {da, db};
        chans[l.name] = ch;
        if (!l.emulated)
        {
            continue;
        }
        fs::create_directories(g_out + "/emulator/" + l.name);
        for (auto [tag, tx, rx] : {std::tuple{"ab", da, db}, std::tuple{"ba", db, da}})
        {
            auto log = std::make_unique<DirLog>();
            log->f.open(g_out + "/emulator/" + l.name + "/linkem-" + tag + ".csv");
            log->f << "t_ns,bytes,packets,drops_queue,drops_loss,queue_bytes,queue_max_bytes,"
                      "late_packets,max_lag_us\n";
            log->queue = tx->GetQueue();
            log->scale = (double)(l.mtu + 14) / (l.mtu + 2);
            DirLog* lp = log.get();
            tx->TraceConnectWithoutContext(
                "PhyTxEnd",
                MakeCallback(+[](DirLog* d, Ptr<const Packet> p) {
                    d->bytes += p->GetSize() + 12; // IP + PPP's 2 → IP + Ethernet's 14
                    d->packets++;
                }).Bind(lp));
            log->queue->TraceConnectWithoutContext(
                "Drop",
                MakeCallback(+[](DirLog* d, Ptr<const Packet>) { d->drops_queue++; }).Bind(lp));
            rx->TraceConnectWithoutContext(
                "PhyRxDrop",
                MakeCallback(+[](DirLog* d, Ptr<const Packet>) { d->drops_loss++; }).Bind(lp));
            Simulator::Schedule(MicroSeconds(emu_interval_us), &DirLog::sample, lp,
                                emu_interval_us * 1000);
            dir_logs.push_back(std::move(log));
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    for (auto& s : sets)
    {
        if (!devs.count(s.link))
        {
            die("set " + s.id + ": no link " + s.link);
        }
        Simulator::Schedule(MicroSeconds(s.at_us), [s, &devs, &chans]() {
            auto [da, db] = devs[s.link];
            for (auto& [tag, d] : {std::pair{"ab", da}, std::pair{"ba", db}})
            {
                if (s.dir != "both" && s.dir != tag)
                {
                    continue;
                }
                if (s.rate_bps != -2)
                {
                    int64_t rate = s.rate_bps > 0 ? s.rate_bps : 100000000000LL;
                    d->SetDataRate(DataRate(rate));
                    d->SetAttribute("InterframeGap", TimeValue(NanoSeconds(96e9 / rate)));
                }
            }
            if (s.delay_us >= 0)
            {
                chans[s.link]->SetAttribute("Delay", TimeValue(MicroSeconds(s.delay_us)));
            }
        });
    }

    std::vector<std::unique_ptr<Receiver>> receivers;
    std::vector<std::unique_ptr<Sender>> senders;
    // The run ends 100 ms (the links' logs a little past the end) after the awaited
    // transfers (a sender and a receiver each) and timers are done, the others stopped
    // then; with none awaited, after every transfer.
    bool awaited_only = std::any_of(tcps.begin(), tcps.end(), [](auto& t) { return t.wait; }) ||
                        std::any_of(timers.begin(), timers.end(), [](auto& t) { return t.wait; }) ||
                        std::any_of(udps.begin(), udps.end(), [](auto& u) { return u.wait; });
    auto counted = [&](bool wait) { return wait || !awaited_only; };
    int pending = 0;
    for (auto& t : tcps)
    {
        pending += counted(t.wait) ? 2 : 0;
    }
    for (auto& t : timers)
    {
        pending += t.wait ? 1 : 0;
    }
    for (auto& u : udps)
    {
        pending += counted(u.wait) ? 2 : 0;
    }
    int64_t last_end = 0;
    auto one_done = [&]() {
        last_end = Simulator::Now().GetMicroSeconds();
        if (--pending == 0)
        {
            Simulator::Stop(MilliSeconds(100));
        }
    };
    for (auto& t : timers)
    {
        if (t.wait)
        {
            Simulator::Schedule(MicroSeconds(t.at_us + t.length_us), one_done);
        }
    }
    for (auto& t : tcps)
    {
        if (!nodes.count(t.src) || !nodes.count(t.dst))
        {
            die("transfer " + t.id + " between unknown nodes");
        }
        make_cc(t.cc); // (an unknown one stops here, before anything runs)
        fs::create_directories(g_out + "/nodes/" + t.dst);
        fs::create_directories(g_out + "/nodes/" + t.src);
        auto r = std::make_unique<Receiver>();
        r->cfg = t;
        r->interval_ns = interval_us * 1000;
        r->log.open(g_out + "/nodes/" + t.dst + "/" + t.id + ".recv.csv");
        r->log << "t_ns,bytes,streams_open\n";
        std::function<void()> done_cb = counted(t.wait) ? one_done : std::function<void()>();
        r->on_done = done_cb;
        r->Start(nodes[t.dst], mss);
        auto s = std::make_unique<Sender>();
        s->cfg = t;
        s->interval_ns = interval_us * 1000;
        s->log.open(g_out + "/nodes/" + t.src + "/" + t.id + ".send.csv");
        s->log << (t.count > 0 ? "msg,t_send_ns,t_recv_ns\n"
                               : "t_ns,stream,bytes_acked,bytes_sent,cwnd,ssthresh,rtt_us,"
                                 "rttvar_us,total_retrans,pacing_rate_bps,delivery_rate_bps,"
                                 "snd_mss,unacked,state,ca_state\n");
        s->on_done = done_cb;
        Ptr<Node> src = nodes[t.src];
        Ptr<TcpL4Protocol> tcp = src->GetObject<TcpL4Protocol>();
        Sender* sp = s.get();
        Simulator::Schedule(MicroSeconds(t.at_us),
                            [sp, src, tcp, mss]() { sp->Start(src, tcp, mss); });
        receivers.push_back(std::move(r));
        senders.push_back(std::move(s));
    }
    // UDP streams: the receiver listens from the start (the engine's prelude) until its
    // drain time after the sender's end; the sender sends from its date
    std::vector<std::unique_ptr<UdpFlow>> udp_flows;
    for (auto& u : udps)
    {
        if (!nodes.count(u.src) || !nodes.count(u.dst))
        {
            die("udp " + u.id + " between unknown nodes");
        }
        fs::create_directories(g_out + "/nodes/" + u.dst);
        fs::create_directories(g_out + "/nodes/" + u.src);
        auto f = std::make_unique<UdpFlow>();
        f->cfg = u;
        f->interval_ns = interval_us * 1000;
        f->recv_end_ns = g_base_ns + (u.at_us + u.duration_us + u.drain_us) * 1000;
        f->on_done = counted(u.wait) ? one_done : std::function<void()>();
        f->Listen(nodes[u.dst], g_out);
        UdpFlow* fp = f.get();
        Ptr<Node> src = nodes[u.src];
        Simulator::Schedule(MicroSeconds(u.at_us), [fp, src]() { fp->Start(src); });
        udp_flows.push_back(std::move(f));
    }
    Simulator::Stop(MicroSeconds(duration_us)); // the timeline's end, whatever runs
    Simulator::Run();
    // what the run awaited and the timeline's end cut short (the engine's message names
    // the processes an emulated run would have left running: <id>.recv, <id>.send)
    std::vector<std::string> unfinished;
    for (size_t k = 0; k < receivers.size(); k++)
    {
        if (!counted(tcps[k].wait))
        {
            continue;
        }
        if (!receivers[k]->done)
        {
            unfinished.push_back(tcps[k].id + ".recv");
        }
        if (!senders[k]->done)
        {
            unfinished.push_back(tcps[k].id + ".send");
        }
    }
    for (auto& f : udp_flows)
    {
        if (counted(f->cfg.wait) && !(f->recv_done && f->send_done))
        {
            unfinished.push_back(f->cfg.id);
        }
    }
    for (auto& t : timers) // (one past the end was kept just past it: config.py)
    {
        if (t.wait && t.at_us + t.length_us > duration_us)
        {
            unfinished.push_back(t.id);
        }
    }
    for (auto& r : receivers)
    {
        r->Finish("the timeline ended before the transfer did");
    }
    for (auto& s : senders)
    {
        if (s->started)
        {
            s->Finish("the timeline ended before the transfer did");
        }
    }
    for (auto& f : udp_flows) // (flow's, stopped: interrupted)
    {
        std::string why = f->cfg.wait ? "the timeline ended before the stream did" : "interrupted";
        if (f->send_start >= 0)
        {
            f->SendFinish(why);
        }
        f->RecvFinish(why);
    }
    for (auto& d : dir_logs)
    {
        d->f.close();
    }
    std::cout << "{\"simulated_ns\": " << Simulator::Now().GetNanoSeconds()
              << ", \"last_end_us\": " << last_end << ", \"unfinished\": [";
    for (size_t k = 0; k < unfinished.size(); k++) // (ids: letters, digits, . _ -)
    {
        std::cout << (k ? ", " : "") << '"' << unfinished[k] << '"';
    }
    std::cout << "]}" << std::endl;
    Simulator::Destroy();
    return 0;
}

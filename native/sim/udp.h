// UDP streams in itb-sim: `flow udp-send` and `flow udp-recv` (docs/flow.md) on ns-3's UDP
// sockets, writing their summaries and the receiver's log in flow's formats.
//
// Included by itb_sim.cc (after now_ns, opt_int and die). The sender's departures are
// flow's: datagram k at k·B·8·10⁹/R after the start (integers, no drift), or exponential
// gaps of mean B·8·10⁹/R drawn from xoshiro256++ seeded through splitmix64 (native/rng:
// the same seed gives the same departures as flow's). Each payload begins with the
// sequence number and the send date (two little-endian u64, cut to B), as flow's; the
// receiver counts as lost the sequence numbers missing between the lowest and highest
// seen. Differences from flow: no batching (flow hands datagrams due within 50 µs of each
// other to one sendmmsg; here each leaves at its date), and a datagram the source's
// device queue refuses is dropped there (counted at that link, not as a send error).

#pragma once

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

struct UdpCfg
{
    std::string id, src, dst, dst_addr;
    int port = 0;
    int64_t at_us = 0, rate_bps = 0, duration_us = 0, drain_us = 0;
    uint32_t size = 0;
    bool poisson = false, wait = true;
    uint64_t seed = 1;
};

// native/rng (xoshiro256++ seeded through splitmix64), as flow draws its Poisson gaps
struct Xoshiro
{
    uint64_t s[4];

    static uint64_t splitmix(uint64_t& x)
    {
        x += 0x9E3779B97F4A7C15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }

    explicit Xoshiro(uint64_t seed)
    {
        for (auto& w : s)
        {
            w = splitmix(seed);
        }
    }

    static uint64_t rotl(uint64_t x, int k)
    {
        return (x << k) | (x >> (64 - k));
    }

    uint64_t next()
    {
        uint64_t result = rotl(s[0] + s[3], 23) + s[0];
        uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
    }

    double exp(double mean) // inverse CDF on (0, 1]
    {
        double u = (double)(next() >> 11) * (1.0 / (double)(1ULL << 53));
        return -mean * std::log(1.0 - u);
    }
};

struct UdpFlow
{
    UdpCfg cfg;
    std::function<void()> on_done; // once per end (sender, receiver) when awaited
    int64_t interval_ns = 100000000, recv_end_ns = 0;
    // the sender
    Ptr<Socket> tx;
    Xoshiro rng{1};
    double t_poisson = 0;
    uint64_t k = 0, sent = 0, send_errors = 0;
    int64_t send_start = -1, send_end = -1;
    bool send_done = false;
    // the receiver
    Ptr<Socket> rx;
    std::ofstream log;
    uint64_t bytes = 0, datagrams = 0, row_bytes = 0, row_datagrams = 0, lo = 0, hi = 0;
    bool seen = false, recv_done = false;
    int64_t recv_start = -1, first = -1, last = -1;
    EventId tick;

    // the receiver binds now (the engine's prelude) and receives until `recv_end_ns`
    void Listen(Ptr<Node> node, const std::string& out)
    {
        log.open(out + "/nodes/" + cfg.dst + "/" + cfg.id + ".udp-recv.csv");
        log << "t_ns,bytes,datagrams\n";
        rx = Socket::CreateSocket(node, UdpSocketFactory::GetTypeId());
        rx->SetAttribute("RcvBufSize", UintegerValue(8 << 20));
        rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), cfg.port));
        rx->SetRecvCallback(MakeCallback(&UdpFlow::Read, this));
        recv_start = now_ns();
        tick = Simulator::Schedule(NanoSeconds(interval_ns), &UdpFlow::Row, this);
        Simulator::Schedule(NanoSeconds(recv_end_ns - recv_start), &UdpFlow::RecvFinish, this,
                            std::string());
    }

    void Read(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        while ((p = s->Recv()))
        {
            uint32_t n = p->GetSize();
            bytes += n;
            row_bytes += n;
            datagrams++;
            row_datagrams++;
            if (n >= 8)
            {
                uint8_t b[8];
                p->CopyData(b, 8);
                uint64_t seq = 0;
                for (int i = 7; i >= 0; i--)
                {
                    seq = (seq << 8) | b[i];
                }
                lo = seen ? std::min(lo, seq) : seq;
                hi = seen ? std::max(hi, seq) : seq;
                seen = true;
            }
            int64_t t = now_ns();
            first = first < 0 ? t : first;
            last = t;
        }
    }

    void Row()
    {
        log << now_ns() << ',' << row_bytes << ',' << row_datagrams << '\n';
        row_bytes = row_datagrams = 0;
        tick = Simulator::Schedule(NanoSeconds(interval_ns), &UdpFlow::Row, this);
    }

    void RecvFinish(const std::string& error)
    {
        if (recv_done)
        {
            return;
        }
        recv_done = true;
        tick.Cancel();
        if (row_bytes > 0) // the last, partial row only when it holds something (flow's)
        {
            log << std::min(now_ns(), recv_end_ns) << ',' << row_bytes << ',' << row_datagrams
                << '\n';
        }
        log.close();
        if (rx)
        {
            rx->Close();
        }
        uint64_t lost = seen && hi - lo + 1 > datagrams ? hi - lo + 1 - datagrams : 0;
        std::ofstream j(g_out + "/nodes/" + cfg.dst + "/" + cfg.id + ".udp-recv.json");
        j << "{\"format\": 1, \"role\": \"udp-recv\", \"bytes\": " << bytes << ", \"datagrams\": " << datagrams
          << ", \"lost\": " << lost << ", \"first_ns\": " << opt_int(first, first >= 0)
          << ", \"last_ns\": " << opt_int(last, last >= 0) << ", \"start_ns\": " << recv_start
          << ", \"end_ns\": " << now_ns() << ", \"ok\": " << (error.empty() ? "true" : "false")
          << ", \"error\": " << (error.empty() ? "null" : "\"" + error + "\"") << "}\n";
        if (on_done)
        {
            on_done();
        }
    }

    // the sender, at its date
    void Start(Ptr<Node> node)
    {
        rng = Xoshiro(cfg.seed);
        tx = Socket::CreateSocket(node, UdpSocketFactory::GetTypeId());
        tx->Bind();
        tx->Connect(InetSocketAddress(Ipv4Address(cfg.dst_addr.c_str()), cfg.port));
        send_start = now_ns();
        Next();
    }

    int64_t Due() const // ns after the start
    {
        if (cfg.poisson)
        {
            return (int64_t)t_poisson;
        }
        return (int64_t)((__int128)k * cfg.size * 8000000000LL / cfg.rate_bps);
    }

    void Next()
    {
        int64_t due = Due();
        if (due >= cfg.duration_us * 1000)
        {
            SendFinish("");
            return;
        }
        Simulator::Schedule(NanoSeconds(std::max<int64_t>(0, send_start + due - now_ns())),
                            &UdpFlow::Send, this);
    }

    void Send()
    {
        std::vector<uint8_t> b(cfg.size, 0);
        uint64_t h[2] = {k, (uint64_t)now_ns()}; // little-endian on this machine, as flow's
        std::memcpy(b.data(), h, std::min<size_t>(cfg.size, sizeof h));
        if (tx->Send(Create<Packet>(b.data(), cfg.size)) >= 0)
        {
            sent++;
        }
        else
        {
            send_errors++;
        }
        k++;
        if (cfg.poisson)
        {
            t_poisson += rng.exp((double)cfg.size * 8e9 / (double)cfg.rate_bps);
        }
        Next();
    }

    void SendFinish(const std::string& error)
    {
        if (send_done)
        {
            return;
        }
        send_done = true;
        send_end = now_ns();
        if (tx)
        {
            tx->Close();
        }
        std::ofstream j(g_out + "/nodes/" + cfg.src + "/" + cfg.id + ".udp-send.json");
        j << "{\"format\": 1, \"role\": \"udp-send\", \"rate_bps\": " << cfg.rate_bps << ", \"size\": " << cfg.size
          << ", \"poisson\": " << (cfg.poisson ? "true" : "false")
          << ", \"seed\": " << opt_int((int64_t)cfg.seed, cfg.poisson) << ", \"datagrams\": " << sent
          << ", \"bytes\": " << sent * cfg.size << ", \"send_errors\": " << send_errors
          << ", \"start_ns\": " << opt_int(send_start, send_start >= 0)
          << ", \"end_ns\": " << send_end << ", \"ok\": " << (error.empty() ? "true" : "false")
          << ", \"error\": " << (error.empty() ? "null" : "\"" + error + "\"") << "}\n";
        if (on_done)
        {
            on_done();
        }
    }
};

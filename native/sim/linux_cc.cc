// Linux's own congestion controls in ns-3 (docs/simulation.md): an ns-3 TcpCongestionOps
// that keeps a Linux `struct tcp_sock` (bpf/difftest/ktypes.h) beside ns-3's socket
// state and calls Linux's net/ipv4/tcp_<name>.c hooks (linked in by itb.cc.simlinux) at
// the points where ns-3's TCP calls its own models.
//
// Before each hook the tcp_sock is filled from ns-3's state: snd_cwnd and snd_ssthresh in
// segments (ns-3 counts bytes), srtt_us (× 8, as Linux keeps it), snd_una / snd_nxt,
// packets in flight, is_cwnd_limited, the congestion state, tcp_mstamp and jiffies from
// the simulated clock, lsndtime from the last transmission. After it, what the hook
// changed goes back: the window after cong_avoid, the threshold whenever the hook set it
// (HyStart sets it from pkts_acked). Linux's fractional window counter (snd_cwnd_cnt)
// and the algorithm's private state (icsk_ca_priv) live here between calls.
//
// Differences from Linux's stack, stated: ns-3 decides when to call each hook (its
// recovery is PRR as Linux's, but its loss detection is its own); ns-3 has no undo of a
// spurious reduction (undo_cwnd is never called); packets_out is ns-3's bytes in flight
// in segments (no separate sacked/lost/retransmitted counts); cong_control (BBR's) is not
// adapted.

#include "linux_cc.h"

#include <algorithm>
#include <map>
#include <utility>

extern "C"
{
#include "linux_state.h"

    const struct tcp_congestion_ops* itb_linux_ops(const char* name);
    void itb_linux_clock(unsigned long long now_ns);
    void tcp_set_ca_state(struct sock* sk, const u8 ca_state);
}

namespace ns3
{

// the testbed's hosts' largest GSO frame (a veth's gso_max_size, Linux's default
// GSO_LEGACY_MAX_SIZE): HyStart's ACK-train threshold reads it (tcp_cubic.c)
static constexpr u32 GSO_MAX_SIZE = 65536;

class LinuxCongestion : public TcpCongestionOps
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ItbLinuxCongestion").SetParent<TcpCongestionOps>();
        return tid;
    }

    LinuxCongestion(const tcp_congestion_ops* ops, std::string name)
        : m_ops(ops),
          m_name(std::move(name))
    {
        m_tp = {};
        m_tp.inet_conn.icsk_ca_ops = ops;
        m_tp.snd_cwnd_clamp = ~0U;
        m_tp.snd_ssthresh = 0x7fffffff;
    }

    std::string GetName() const override
    {
        return "linux:" + m_name;
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<LinuxCongestion>(this);
    }

    void Init(Ptr<TcpSocketState> tcb) override
    {
        In(tcb);
        if (m_ops->init)
        {
            m_ops->init(Sk());
        }
        Out(tcb, false);
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) override
    {
        In(tcb);
        itb_state_reduction(&m_tp);
        uint32_t segs = m_ops->ssthresh(Sk());
        m_tp.snd_ssthresh = segs;
        return segs * tcb->m_segmentSize;
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
        In(tcb);
        m_ops->cong_avoid(Sk(), m_tp.snd_una, segmentsAcked);
        Out(tcb, true);
    }

    // (ns-3 passes its smoothed RTT: Linux passes the ACK's own sample, below)
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time&) override
    {
        if (!m_ops->pkts_acked)
        {
            return;
        }
        In(tcb);
        ack_sample s{segmentsAcked, Sample(tcb->m_lastAckedSeq.GetValue()), m_tp.packets_out};
        m_ops->pkts_acked(Sk(), &s);
        Out(tcb, false);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        In(tcb);
        tcp_set_ca_state(Sk(), (u8)newState); // Linux's: set_state, then the state
        Out(tcb, false);
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (!m_ops->cwnd_event || event > TcpSocketState::CA_EVENT_ECN_IS_CE)
        {
            return; // (ns-3's delayed-ACK events have no Linux counterpart)
        }
        In(tcb);
        m_ops->cwnd_event(Sk(), (tcp_ca_event)event);
        Out(tcb, false);
    }

    void Sent(uint32_t in_flight, uint32_t cwnd, uint32_t mss, uint32_t una, uint32_t nxt,
              uint32_t end)
    {
        m_sent_ns = Simulator::Now().GetNanoSeconds();
        if (m_ops->pkts_acked) // the send dates its RTT samples come from
        {
            Unwrap(una, true);
            uint64_t e = Unwrap(end);
            if (e > m_high)
            {
                m_sent_at[e] = {m_sent_ns, false};
                m_high = e;
            }
            else if (auto it = m_sent_at.find(e); it != m_sent_at.end())
            {
                it->second.second = true; // retransmitted: no sample from it (Karn)
            }
        }
        // no room left for a full segment: the window is what limits (ns-3's own test)
        itb_state_sent(&m_tp, in_flight + mss > cwnd, (nxt - una) / mss, una, nxt);
    }

  private:
    // A sequence number as a 64-bit offset, relative to SND.UNA's (all are within 2 GiB
    // of it); `una`: it is SND.UNA, the new reference.
    uint64_t Unwrap(uint32_t seq, bool una = false)
    {
        if (!m_unwrapping) // the first: the reference
        {
            m_unwrapping = true;
            m_una_raw = seq;
        }
        uint64_t u = m_una_u + (int64_t)(int32_t)(seq - m_una_raw);
        if (una && (int32_t)(seq - m_una_raw) > 0)
        {
            m_una_u = u;
            m_una_raw = seq;
        }
        return u;
    }

    // The ACK's RTT sample as Linux's pkts_acked gets it (tcp_clean_rtx_queue's
    // ca_rtt_us): from the send date of the newest segment it acknowledges that was not
    // retransmitted, in µs; -1 without one (a duplicate ACK). ns-3's own samples are
    // its timestamps' (whole milliseconds), and it passes the smoothed RTT, which lags
    // a rising RTT: HyStart found a queue a round or two late, at 2–4 times the window
    // the testbed's Linux left slow start with.
    s32 Sample(uint32_t una)
    {
        uint64_t u = Unwrap(una, true);
        int64_t newest = -1;
        while (!m_sent_at.empty() && m_sent_at.begin()->first <= u)
        {
            if (!m_sent_at.begin()->second.second)
            {
                newest = m_sent_at.begin()->second.first;
            }
            m_sent_at.erase(m_sent_at.begin());
        }
        if (newest < 0)
        {
            return -1;
        }
        return (s32)std::max<int64_t>(1, (Simulator::Now().GetNanoSeconds() - newest) / 1000);
    }

    sock* Sk()
    {
        return reinterpret_cast<sock*>(&m_tp);
    }

    ns3_view View(Ptr<const TcpSocketState> tcb) const
    {
        ns3_view v{};
        v.cwnd_bytes = tcb->m_cWnd.Get();
        v.ssthresh_bytes = tcb->m_ssThresh.Get();
        v.mss = tcb->m_segmentSize;
        v.bytes_in_flight = tcb->m_bytesInFlight.Get();
        v.srtt_ns = tcb->m_srtt.Get().GetNanoSeconds();
        v.last_acked_seq = tcb->m_lastAckedSeq.GetValue();
        v.next_tx_seq = tcb->m_nextTxSequence.Get().GetValue();
        v.cwnd_limited = m_tp.is_cwnd_limited; // Linux's rule, kept by Sent()
        v.max_packets_out = m_tp.max_packets_out;
        v.ca_state = (u8)tcb->m_congState.Get();
        v.now_us = Simulator::Now().GetMicroSeconds();
        v.lsndtime = (u32)(1000000UL + m_sent_ns / (1000000000ULL / CCDIFF_HZ));
        v.max_pacing_rate = tcb->m_pacing ? tcb->m_maxPacingRate.GetBitRate() / 8 : ~0ULL;
        v.gso_max_size = GSO_MAX_SIZE;
        return v;
    }

    void In(Ptr<const TcpSocketState> tcb)
    {
        itb_linux_clock(Simulator::Now().GetNanoSeconds());
        ns3_view v = View(tcb);
        m_ssthresh_in = itb_state_in(&m_tp, &v);
    }

    void Out(Ptr<TcpSocketState> tcb, bool window)
    {
        ns3_view v = View(tcb);
        itb_state_out(&m_tp, &v, window, m_ssthresh_in);
        if (window)
        {
            tcb->m_cWnd = v.cwnd_bytes;
        }
        if (v.ssthresh_bytes != tcb->m_ssThresh.Get())
        {
            tcb->m_ssThresh = v.ssthresh_bytes;
        }
    }

    const tcp_congestion_ops* m_ops;
    std::string m_name;
    tcp_sock m_tp;
    uint32_t m_ssthresh_in = 0;
    uint64_t m_sent_ns = 0;
    // new segments' ends (offsets, Unwrap) → (send date in ns, retransmitted since)
    std::map<uint64_t, std::pair<int64_t, bool>> m_sent_at;
    uint64_t m_high = 0, m_una_u = 1ULL << 32;
    uint32_t m_una_raw = 0;
    bool m_unwrapping = false;
};

Ptr<TcpCongestionOps>
LinuxCc(const std::string& name)
{
    const tcp_congestion_ops* ops = itb_linux_ops(name.c_str());
    if (!ops)
    {
        return nullptr;
    }
    return CreateObject<LinuxCongestion>(ops, name);
}

void
LinuxCcSent(Ptr<TcpCongestionOps> cc,
            uint32_t in_flight_bytes,
            uint32_t cwnd_bytes,
            uint32_t mss,
            uint32_t snd_una,
            uint32_t snd_nxt,
            uint32_t seg_end)
{
    Ptr<LinuxCongestion> l = DynamicCast<LinuxCongestion>(cc);
    if (l)
    {
        l->Sent(in_flight_bytes, cwnd_bytes, mss, snd_una, snd_nxt, seg_end);
    }
}

} // namespace ns3

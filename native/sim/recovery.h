// itb-sim's fast recovery: Linux's proportional rate reduction (net/ipv4/tcp_input.c,
// tcp_cwnd_reduction; RFC 6937 and its revision RFC 9937) in ns-3's TcpRecoveryOps,
// taking the place of ns-3.44's TcpPrrRecovery, whose arithmetic loses the window:
//
// - it multiplies the bytes delivered by the threshold in 32 bits (m_prrDelivered *
//   m_ssThresh): past 4 GiB the product wraps, which it does as soon as the threshold
//   is above ~1.5 MB (a 1 Gbit/s, 20 ms window) on the first duplicate ACK, and after
//   enough ACKs for any threshold above ~46 kB; the send quota is then garbage, mostly
//   zero: the sender falls silent for most of a round trip, then sends the whole
//   difference at once when the pipe drops below the threshold (measured on a
//   500 Mbit/s, 50 ms path with a half-BDP queue: 45 ms silent, then 880 segments in
//   15 ms, a second overflow of the queue, lost retransmissions and a timeout that
//   Linux does not have);
// - it counts one segment more per duplicate ACK than was delivered (SACK already counts
//   it), and the same ACK twice when it both advances SND.UNA and SACKs new data (ns-3
//   calls DoRecovery from its duplicate-ACK and its partial-ACK paths).
//
// Here, as Linux: delivered = the bytes newly (S)ACKed by this ACK (ns-3's
// m_lastAckedSackedBytes, each ACK counted once); the reduction is proportional to the
// window at the start of recovery (Linux's prior_cwnd) while the pipe is above the
// threshold, then the pipe is let grow to the threshold by what was delivered, with one
// segment more when SND.UNA advanced (Linux's PRR-SSRB on such an ACK); 64-bit integers
// throughout. Written for ITB from Linux's description and RFC 9937, not copied.

#ifndef ITB_SIM_RECOVERY_H
#define ITB_SIM_RECOVERY_H

#include "ns3/simulator.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-socket-state.h"

#include <algorithm>
#include <cstdint>

namespace ns3
{

class LinuxPrrRecovery : public TcpRecoveryOps
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ItbLinuxPrrRecovery")
                                .SetParent<TcpRecoveryOps>()
                                .AddConstructor<LinuxPrrRecovery>();
        return tid;
    }

    std::string GetName() const override
    {
        return "LinuxPrrRecovery";
    }

    void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t, uint32_t) override
    {
        m_prior_cwnd = std::max<int64_t>(tcb->m_cWnd.Get(), tcb->m_segmentSize);
        m_delivered = 0;
        m_out = 0;
        m_last_una = m_una_before = tcb->m_lastAckedSeq;
        m_last_ack_ns = -1;
        Reduce(tcb);
    }

    void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t, bool) override
    {
        Reduce(tcb);
    }

    void ExitRecovery(Ptr<TcpSocketState>) override
    {
    }

    void UpdateBytesSent(uint32_t bytes) override
    {
        m_out += bytes;
    }

    Ptr<TcpRecoveryOps> Fork() override
    {
        return CopyObject<LinuxPrrRecovery>(this);
    }

  private:
    // once per ACK (ns-3 may call twice for one): the window after what it delivered
    void Reduce(Ptr<TcpSocketState> tcb)
    {
        int64_t now = Simulator::Now().GetTimeStep();
        if (now != m_last_ack_ns || tcb->m_lastAckedSeq != m_last_una) // a new ACK
        {
            m_una_before = m_last_una;
            m_delivered += tcb->m_lastAckedSackedBytes;
            m_last_ack_ns = now;
            m_last_una = tcb->m_lastAckedSeq;
        }
        bool advanced = m_last_una > m_una_before;
        int64_t mss = tcb->m_segmentSize;
        int64_t pipe = tcb->m_bytesInFlight.Get();
        int64_t ssthresh = tcb->m_ssThresh.Get();
        int64_t delivered = tcb->m_lastAckedSackedBytes;
        int64_t send;
        if (pipe > ssthresh)
        {
            // proportional: ssthresh / prior_cwnd of what was delivered, rounded up
            send = (ssthresh * m_delivered + m_prior_cwnd - 1) / m_prior_cwnd - m_out;
        }
        else
        {
            // back up to the threshold by what was delivered (and not yet sent)
            send = std::max(m_delivered - m_out, delivered) + (advanced ? mss : 0);
            send = std::min(ssthresh - pipe, send);
        }
        send = std::max<int64_t>(send, m_out > 0 ? 0 : mss); // the fast retransmit
        int64_t cwnd = std::max<int64_t>(pipe + send, mss);
        tcb->m_cWnd = (uint32_t)std::min<int64_t>(cwnd, UINT32_MAX);
        tcb->m_cWndInfl = tcb->m_cWnd;
    }

    int64_t m_prior_cwnd = 1, m_delivered = 0, m_out = 0, m_last_ack_ns = -1;
    SequenceNumber32 m_last_una{0}, m_una_before{0};
};

} // namespace ns3

#endif

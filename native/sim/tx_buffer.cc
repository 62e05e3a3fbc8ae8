// itb-sim's TcpTxBuffer::NextSeg, taking the place of ns-3's (libns3-internet calls it
// through its PLT; itb-sim is linked with -rdynamic so that its definition is the one
// found). ns-3's rule 1 (RFC 6675's NextSeg: the first lost segment not yet
// retransmitted) walks the whole sent list for every segment sent: a window of 1 700
// segments costs 60 % of a 10 Gbit/s simulation with no loss at all. When nothing is
// marked lost (m_lostOut, the lost bytes ns-3 keeps with every mark) that walk finds
// nothing, and out of recovery rule 3 is off: then rule 2 (the next new segment, as far
// as the receiver's window allows) is taken at once, as ns-3 would take it after the
// walk. Every other case is ns-3's own function. Exact: tests/sim compares repetitions'
// logs byte for byte with and without it (ITB_SIM_NS3_NEXTSEG set: ns-3's always).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <list>
#include <utility>

#include "ns3/callback.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/sequence-number.h"
#include "ns3/traced-value.h"

// the members rule 2 reads (m_sentSize, m_rWndCallback, m_segmentSize, …) are private
#define private public
#include "ns3/tcp-tx-buffer.h"
#undef private

namespace ns3
{

bool
TcpTxBuffer::NextSeg(SequenceNumber32* seq, SequenceNumber32* seqHigh, bool isRecovery) const
{
    using Fn = bool (*)(const TcpTxBuffer*, SequenceNumber32*, SequenceNumber32*, bool);
    static const Fn ns3s = reinterpret_cast<Fn>(
        dlsym(RTLD_NEXT, "_ZNK3ns311TcpTxBuffer7NextSegEPNS_14SequenceNumberIjiEES3_b"));
    if (ns3s == nullptr)
    {
        std::fprintf(stderr, "itb-sim: ns-3's TcpTxBuffer::NextSeg not found: %s\n", dlerror());
        std::abort();
    }
    static const bool ns3s_only = std::getenv("ITB_SIM_NS3_NEXTSEG") != nullptr; // (tests)
    if (isRecovery || m_lostOut != 0 || ns3s_only)
    {
        return ns3s(this, seq, seqHigh, isRecovery);
    }
    SequenceNumber32 next = m_firstByteSeq + m_sentSize;
    if (SizeFromSequence(next) == 0)
    {
        return false; // no unsent data; rule 3 is for recovery; rule 4 is not taken
    }
    uint32_t rwnd = m_rWndCallback();
    if (m_sentSize >= rwnd)
    {
        // the receiver's window is used up: ns-3's own answer (taking rule 2 here would
        // return an empty range, which its SendDataPacket cannot send: a 10 Gbit/s flow
        // crashed in TcpRateLinux::SkbSent on the null item)
        return ns3s(this, seq, seqHigh, isRecovery);
    }
    *seq = next;
    *seqHigh = next + std::min<uint32_t>(m_segmentSize, rwnd - m_sentSize);
    return true;
}

} // namespace ns3

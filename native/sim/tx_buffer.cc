// itb-sim's own TcpTxBuffer::NextSeg, Update and IsRetransmittedDataAcked, taking the
// place of ns-3's (libns3-internet calls them through its PLT; itb-sim is linked with
// -rdynamic so that its definitions are the ones found); ns-3's own are found with dlsym
// (RTLD_NEXT) for what is not done here and for the tests that compare the bytes.
//
// NextSeg: ns-3's rule 1 (RFC 6675's NextSeg: the first lost segment not yet
// retransmitted) walks the whole sent list for every segment sent: a window of 1 700
// segments costs 60 % of a 10 Gbit/s simulation with no loss at all. When nothing is
// marked lost (m_lostOut, the lost bytes ns-3 keeps with every mark) that walk finds
// nothing, and out of recovery rule 3 is off: then rule 2 (the next new segment, as far
// as the receiver's window allows) is taken at once, as ns-3 would take it after the
// walk. Otherwise (something lost, or in recovery) the walk stops at the highest segment
// SACKed (NextSegOf, below: twelve lossy 10 Gbit/s flows' first second 50 -> 42 s). Exact: tests/sim compares
// repetitions' logs byte for byte with and without it (ITB_SIM_NS3_NEXTSEG set: ns-3's
// always).
//
// Update (the SACK scoreboard): ns-3's, then a lost retransmission found as Linux finds
// one (below).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <list>
#include <utility>
#include <vector>

#include "ns3/callback.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/sequence-number.h"
#include "ns3/tcp-option-sack.h"
#include "ns3/traced-value.h"

// the members rule 2 reads (m_sentSize, m_rWndCallback, m_segmentSize, …) are private
#define private public
#include "ns3/tcp-tx-buffer.h"
#undef private

namespace ns3
{

// ns-3.44's rules 1 to 3. Their walk (rules 1 and 3) is taken only when it can find
// something (`walk`: a segment marked lost, or recovery, rule 3's condition), and stops at
// the first segment at or past the highest one SACKed (with a SACK seen, neither rule
// takes a segment there, and the list runs in sequence order from SND.UNA; ns-3 walked on
// to the list's end: the segments sent since, most of a window in recovery) — only while
// the highest SACK is a segment of the list: then no segment's comparison with it wraps.
static bool
NextSegOf(const TcpTxBuffer* b,
          SequenceNumber32* seq,
          SequenceNumber32* seqHigh,
          bool isRecovery,
          bool walk)
{
    const bool stops = b->m_sackSeen && b->m_highestSack.first != b->m_sentList.end();
    SequenceNumber32 begin = b->m_firstByteSeq;
    SequenceNumber32 rule3;
    bool rule3_found = false;
    for (auto it = b->m_sentList.begin(); walk && it != b->m_sentList.end(); ++it)
    {
        const TcpTxItem* item = *it;
        bool below = item->m_startSeq < b->m_highestSack.second;
        if (stops && !below)
        {
            break;
        }
        if (!item->m_retrans && !item->m_sacked && (below || !b->m_sackSeen))
        {
            if (item->m_lost) // rule 1: the first lost segment not retransmitted
            {
                *seq = begin;
                *seqHigh = begin + b->m_segmentSize;
                return true;
            }
            if (rule3.GetValue() == 0 && isRecovery)
            {
                rule3_found = true;
                rule3 = begin;
            }
        }
        begin += item->m_packet->GetSize();
    }
    SequenceNumber32 next = b->m_firstByteSeq + b->m_sentSize;
    if (b->SizeFromSequence(next) > 0) // rule 2: new data, as the receiver's window allows
    {
        // (a window used up returns false: an empty range its SendDataPacket cannot send)
        if (b->m_sentSize < b->m_rWndCallback())
        {
            *seq = next;
            *seqHigh = next + std::min<uint32_t>(b->m_segmentSize,
                                                 b->m_rWndCallback() - b->m_sentSize);
            return true;
        }
        return false;
    }
    if (rule3_found) // rule 3: the first unSACKed segment below the highest SACK
    {
        *seq = rule3;
        *seqHigh = rule3 + b->m_segmentSize;
        return true;
    }
    return false; // (ns-3 has no rule 4)
}

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
    if (ns3s_only)
    {
        return ns3s(this, seq, seqHigh, isRecovery);
    }
    return NextSegOf(this, seq, seqHigh, isRecovery, isRecovery || m_lostOut != 0);
}

// itb-sim's TcpTxBuffer::IsRetransmittedDataAcked: whether the ACK covers a retransmitted
// segment, not SACKed, ending exactly at it. ns-3's walks the whole sent list at every ACK
// (10 % of twelve 10 Gbit/s flows' time); the list runs in sequence order from SND.UNA, so
// no segment starting at or past the ACK can end at it: the walk stops at the first one.
// Exact (ITB_SIM_NS3_WALKS set: ns-3's own, for the tests that compare the bytes).
bool
TcpTxBuffer::IsRetransmittedDataAcked(const SequenceNumber32& ack) const
{
    using Fn = bool (*)(const TcpTxBuffer*, const SequenceNumber32&);
    static const Fn ns3s = reinterpret_cast<Fn>(
        dlsym(RTLD_NEXT, "_ZNK3ns311TcpTxBuffer24IsRetransmittedDataAckedERKNS_14SequenceNumberIjiEE"));
    if (ns3s == nullptr)
    {
        std::fprintf(stderr,
                     "itb-sim: ns-3's TcpTxBuffer::IsRetransmittedDataAcked not found: %s\n",
                     dlerror());
        std::abort();
    }
    static const bool ns3s_only = std::getenv("ITB_SIM_NS3_WALKS") != nullptr;
    if (ns3s_only)
    {
        return ns3s(this, ack);
    }
    for (const TcpTxItem* item : m_sentList)
    {
        if (item->m_startSeq >= ack)
        {
            return false;
        }
        if (item->m_startSeq + item->m_packet->GetSize() == ack && !item->m_sacked &&
            item->m_retrans)
        {
            return true;
        }
    }
    return false;
}

// itb-sim's TcpTxBuffer::Update (the SACK scoreboard's update, found first as NextSeg is):
// ns-3's own, then a lost retransmission found as Linux finds one (RACK, RFC 8985;
// net/ipv4/tcp_recovery.c): a segment retransmitted before a segment that has since
// been SACKed was sent is lost again, since the later one got through. ns-3.44 finds
// it only by the retransmission timeout (RTO, 200 ms at least, then slow start from one
// segment): in a queue still full of the other flows' overshoot, where Linux loses no
// time, ns-3 timed out. Here the segment loses its "retransmitted" mark (it stays marked
// lost), which takes it out of the pipe and lets NextSeg's rule 1 send it again; ns-3's
// own invariants hold (lost, SACKed and retransmitted bytes counted as its
// ConsistencyCheck counts them). ITB_SIM_NS3_LOST_RETRANS set: ns-3's alone (tests).
uint32_t
TcpTxBuffer::Update(const TcpOptionSack::SackList& list, const Callback<void, TcpTxItem*>& sackedCb)
{
    using Fn = uint32_t (*)(TcpTxBuffer*,
                            const TcpOptionSack::SackList&,
                            const Callback<void, TcpTxItem*>&);
    static const Fn ns3s = reinterpret_cast<Fn>(
        dlsym(RTLD_NEXT,
              "_ZN3ns311TcpTxBuffer6UpdateERKNSt7__cxx114listISt4pairINS_14SequenceNumberIjiEES5_"
              "ESaIS6_EEERKNS_8CallbackIvJPNS_9TcpTxItemEEEE"));
    if (ns3s == nullptr)
    {
        std::fprintf(stderr, "itb-sim: ns-3's TcpTxBuffer::Update not found: %s\n", dlerror());
        std::abort();
    }
    static const bool ns3s_only = std::getenv("ITB_SIM_NS3_LOST_RETRANS") != nullptr;
    uint32_t sacked = ns3s(this, list, sackedCb);
    if (sacked == 0 || m_retrans == 0 || ns3s_only)
    {
        return sacked;
    }
    // one walk of the sent list (it was two: 18 % of twelve 10 Gbit/s flows' time): the
    // last transmission of a segment SACKed, and the retransmitted ones not SACKed, in the
    // list's order, marked after it as the second walk did
    Time latest = Time::Min();
    static std::vector<TcpTxItem*> retransmitted;
    retransmitted.clear();
    for (TcpTxItem* item : m_sentList)
    {
        if (item->m_sacked)
        {
            latest = std::max(latest, item->m_lastSent);
        }
        else if (item->m_retrans)
        {
            retransmitted.push_back(item);
        }
    }
    for (TcpTxItem* item : retransmitted)
    {
        if (item->m_lastSent < latest)
        {
            uint32_t size = item->m_packet->GetSize();
            item->m_retrans = false;
            m_retrans -= size;
            if (!item->m_lost)
            {
                item->m_lost = true;
                m_lostOut += size;
            }
        }
    }
    return sacked;
}

} // namespace ns3

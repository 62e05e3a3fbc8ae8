// itb-sim's TcpRxBuffer::Add, taking the place of ns-3's (libns3-internet calls it through
// its PLT; itb-sim is linked with -rdynamic, as for tx_buffer.cc).
//
// A segment in: trimmed to RCV.NXT and the buffer's end, trimmed again (or an embedded
// older segment dropped) where it overlaps what is held, stored, a SACK block made when it
// lies beyond RCV.NXT, then RCV.NXT moved over what is now contiguous. ns-3.44's version
// does all this walking the held segments from the first one, twice: the overlap search
// over every segment held, out of order ones included (7 % of twelve lossy 10 Gbit/s
// flows' time), and the advance of RCV.NXT over the unread in-order data. The held
// segments are disjoint and kept in sequence order, so none before the last one starting
// at or below the new segment's head can overlap it, and none starting before RCV.NXT can
// move it: both walks start there (map lookups), and do the rest as ns-3's. Exact: tests
// compare the logs byte for byte with ns-3's own (ITB_SIM_NS3_WALKS set).

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

#include "ns3/packet.h"
#include "ns3/tcp-header.h"

// the members Add updates (m_data, m_nextRxSeq, …) and the SACK list's helpers are private
#define private public
#include "ns3/tcp-rx-buffer.h"
#undef private

namespace ns3
{

bool
TcpRxBuffer::Add(Ptr<Packet> p, const TcpHeader& tcph)
{
    using Fn = bool (*)(TcpRxBuffer*, Ptr<Packet>, const TcpHeader&);
    static const Fn ns3s = reinterpret_cast<Fn>(
        dlsym(RTLD_NEXT, "_ZN3ns311TcpRxBuffer3AddENS_3PtrINS_6PacketEEERKNS_9TcpHeaderE"));
    if (ns3s == nullptr)
    {
        std::fprintf(stderr, "itb-sim: ns-3's TcpRxBuffer::Add not found: %s\n", dlerror());
        std::abort();
    }
    static const bool ns3s_only = std::getenv("ITB_SIM_NS3_WALKS") != nullptr;
    if (ns3s_only)
    {
        return ns3s(this, p, tcph);
    }

    const SequenceNumber32 first = tcph.GetSequenceNumber();
    SequenceNumber32 head = first;
    SequenceNumber32 tail = first + SequenceNumber32(p->GetSize());
    if (head < m_nextRxSeq)
    {
        head = m_nextRxSeq;
    }
    if (!m_data.empty())
    {
        SequenceNumber32 end = m_data.begin()->first + SequenceNumber32(m_maxBuffer);
        if (end < tail)
        {
            tail = end;
        }
        if (tail < head)
        {
            head = tail;
        }
    }
    // the overlaps: from the last segment held that starts at or below the head
    auto i = m_data.upper_bound(head);
    if (i != m_data.begin())
    {
        --i;
    }
    while (i != m_data.end() && i->first <= tail)
    {
        SequenceNumber32 last = i->first + SequenceNumber32(i->second->GetSize());
        if (last > head)
        {
            if (i->first > head && last < tail) // an older segment inside the new one
            {
                m_size -= i->second->GetSize();
                i = m_data.erase(i);
                continue;
            }
            if (i->first <= head)
            {
                head = last;
            }
            if (last >= tail)
            {
                tail = i->first;
            }
        }
        ++i;
    }
    if (head >= tail)
    {
        return false; // nothing new
    }
    p = p->CreateFragment(static_cast<uint32_t>(head - first), static_cast<uint32_t>(tail - head));
    m_data[head] = p;
    if (head > m_nextRxSeq)
    {
        UpdateSackList(head, tail);
    }
    m_size += p->GetSize();
    // RCV.NXT over what is contiguous now: from the first segment starting at it
    for (i = m_data.lower_bound(m_nextRxSeq); i != m_data.end() && i->first == m_nextRxSeq; ++i)
    {
        m_nextRxSeq = i->first + SequenceNumber32(i->second->GetSize());
        m_availBytes += i->second->GetSize();
        ClearSackList(m_nextRxSeq);
    }
    if (m_gotFin && m_nextRxSeq == m_finSeq)
    {
        ++m_nextRxSeq; // the FIN
    }
    return true;
}

} // namespace ns3

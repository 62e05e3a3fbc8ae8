// Linux's own congestion controls in ns-3 (linux_cc.cc).
#ifndef ITB_SIM_LINUX_CC_H
#define ITB_SIM_LINUX_CC_H

#include "ns3/internet-module.h"

#include <string>

namespace ns3
{
// Linux's algorithm of that name (reno, cubic, bic, highspeed, htcp, scalable, vegas), or
// nullptr when none is linked in.
Ptr<TcpCongestionOps> LinuxCc(const std::string& name);
// The socket sent a segment ending at seg_end: Linux's lsndtime (the idle restart's
// CA_EVENT_TX_START), whether the window is used (tcp_cwnd_validate), from the bytes in
// flight and the window after it, the segment size, SND.UNA and SND.NXT (the highest
// sent), and its send date (the RTT samples pkts_acked gets).
void LinuxCcSent(Ptr<TcpCongestionOps> cc,
                 uint32_t in_flight_bytes,
                 uint32_t cwnd_bytes,
                 uint32_t mss,
                 uint32_t snd_una,
                 uint32_t snd_nxt,
                 uint32_t seg_end);
} // namespace ns3

#endif

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
// The socket sent a segment (Linux's lsndtime, for the idle restart's CA_EVENT_TX_START).
void LinuxCcSent(Ptr<TcpCongestionOps> cc);
} // namespace ns3

#endif

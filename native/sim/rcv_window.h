// Linux's receive window (kernel 6.18: net/ipv4/tcp_input.c, tcp_output.c, tcp_minisocks.c),
// for itb-sim's sockets: what a receiver advertises, as the testbed's receivers do, instead
// of ns-3's (its whole receive buffer from the first ACK).
//
// A receiver starts from tcp_rmem[1] of buffer (131 072 bytes on the testbed) and offers
// the window that buffer holds; its autotuning ("dynamic right-sizing") grows the buffer
// once a receiver round trip has read more than the last one did. On the testbed the first
// growth comes late in slow start (a 500 Mbit/s, 50 ms transfer's flight held at 58
// segments in its fourth round trip), which sets where the slow start ends.
//
// Modelled, as Linux does it:
// - the SYN-ACK's window: tcp_full_space() of tcp_rmem[1] at the default scaling ratio
//   (½), rounded down to whole segments, at most 65 535 bytes (tcp_select_initial_window);
//   rcv_ssthresh starts there and the clamp at that full space (tcp_init_buffer_space);
// - the scaling ratio (payload per byte of receive memory) set by the first data segment
//   (tcp_measure_rcv_mss): SCALING_RATIO, measured on the testbed's receivers;
// - rcv_ssthresh + max(2 MSS, 2 len) per data segment, up to the clamp and the free space
//   (tcp_grow_window);
// - the window offered: the free space (buffer less what is unread, at the ratio), at most
//   rcv_ssthresh, aligned up to the window scale; 0 below a sixteenth of the buffer or one
//   MSS while under half of it; never shrunk below what was offered
//   (__tcp_select_window, tcp_select_window);
// - the receiver's RTT from the timestamp echoed by data segments (ms), the first echo
//   after the handshake's not counted, its minimum kept while data waits unread
//   (tcp_rcv_rtt_measure_ts, tcp_rcv_rtt_update);
// - the autotuning at each read (tcp_rcv_space_adjust, tcp_rcvbuf_grow): once a receiver
//   RTT has passed since the last measure, the bytes read meanwhile less those still
//   unread; above the last measure's, the buffer grows to the window 2·new·(1 + 2·(new −
//   old)/old) plus the out-of-order span needs, at most tcp_rmem[2], and the clamp with it.
// Differences from Linux, stated:
// - the scaling ratio is the testbed's measured one (170/256 at MTU 1500) for every
//   segment size; Linux computes it from each skb's true size;
// - the receiver's first RTT sample is the first data segment's that echoes a timestamp
//   of an ACK (Linux takes one from the handshake's last ACK too: on the testbed 51 ms
//   at a 50 ms path, replaced by the 50 ms of the next round trip's data, the first
//   date it is compared at);
// - the out-of-order span is the bytes held out of order (ns-3 keeps no last skb);
// - no memory pressure, no window-update ACK when a read frees space (tcp_cleanup_rbuf):
//   the reader takes what arrived right after the ACK that arrival caused;
// - the ACK-every-other-segment rule is ns-3's (DelAckCount 2), not __tcp_ack_snd_check's
//   window test.

#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

struct LinuxRcvWindow
{
    // tcp_rcvbuf_grow tracepoint on the testbed's receivers (2026-12-07, MTU 1500,
    // 500 Mbit/s): scaling_ratio=170, i.e. a 1448-byte segment costs ~2 180 bytes
    static constexpr uint32_t SCALING_RATIO = 170;
    static constexpr uint32_t DEFAULT_RATIO = 128; // TCP_DEFAULT_SCALING_RATIO
    static constexpr uint32_t INIT_CWND = 10;      // TCP_INIT_CWND

    int64_t rcvbuf = 131072, rmem_max = 131072; // sk_rcvbuf, tcp_rmem[2]
    uint32_t ratio = DEFAULT_RATIO;
    uint32_t mss = 1448, wscale = 0;
    int64_t rcv_ssthresh = 0, window_clamp = 0, rcv_wnd = 0;
    uint32_t rcv_wup = 0; // rcv_nxt (a sequence number) when rcv_wnd was offered
    // tcp_rcv_rtt_est (µs, << 3 as Linux keeps it) and the last echo counted
    int64_t rtt_us8 = 0;
    uint32_t last_tsecr = 0;
    // rcvq_space: the last measure's bytes, the bytes read then, its date (µs)
    int64_t space = 0;
    uint64_t space_seq = 0;
    int64_t space_time_us = 0;
    bool established = false;
    unsigned port = 0; // the local port (the trace's sport)

    // ITB_SIM_TRACE_RCVBUF set: each growth on stderr, to set beside the testbed's trace
    static bool Traced()
    {
        static const bool on = std::getenv("ITB_SIM_TRACE_RCVBUF") != nullptr;
        return on;
    }

    int64_t WinFromSpace(int64_t s) const
    {
        return s * ratio >> 8;
    }

    int64_t SpaceFromWin(int64_t w) const
    {
        return (w << 8) / ratio;
    }

    // tcp_space: the window the buffer's free part holds
    int64_t Space(uint64_t unread) const
    {
        return WinFromSpace(rcvbuf) - (int64_t)unread;
    }

    // tcp_select_initial_window, tcp_init_buffer_space: the SYN(-ACK)'s window
    void Init(int64_t rmem_default, int64_t rmem_max_, uint32_t mss_)
    {
        rcvbuf = rmem_default;
        rmem_max = std::max(rmem_max_, rmem_default);
        mss = mss_;
        ratio = DEFAULT_RATIO;
        int64_t full = WinFromSpace(rcvbuf);
        int64_t w = full > mss ? full / mss * mss : full;
        rcv_wnd = std::min<int64_t>(w, 65535);
        rcv_ssthresh = rcv_wnd;
        window_clamp = full;
        space = std::min<int64_t>(rcv_wnd, INIT_CWND * mss);
    }

    // the handshake's last segment in (its echo is not a sample), the connection's start
    void Establish(int64_t now_us, uint32_t tsecr, uint64_t copied, uint32_t rcv_nxt)
    {
        last_tsecr = tsecr;
        rcv_wup = rcv_nxt;
        space_time_us = now_us;
        space_seq = copied;
        established = true;
    }

    // a data segment of len bytes in, echoing tsecr (ms) at now (ms); unread counts it
    void Data(uint32_t now_ms, uint32_t tsecr, uint32_t len, uint64_t unread, bool queue_empty)
    {
        if (tsecr != last_tsecr) // tcp_rcv_rtt_measure_ts
        {
            last_tsecr = tsecr;
            int64_t delta_us = (int64_t)(int32_t)(now_ms - tsecr) * 1000;
            if (tsecr != 0 && len >= mss && delta_us > 0)
            {
                int64_t m = delta_us << 3;
                if (rtt_us8 == 0 || m < rtt_us8)
                {
                    rtt_us8 = m;
                }
                else if (queue_empty)
                {
                    rtt_us8 = rtt_us8 - (rtt_us8 >> 3) + delta_us;
                }
            }
        }
        if (ratio != SCALING_RATIO) // tcp_measure_rcv_mss
        {
            ratio = SCALING_RATIO;
            window_clamp = WinFromSpace(rcvbuf);
            rcv_ssthresh = std::min(rcv_ssthresh, window_clamp);
        }
        if (len >= 128) // tcp_grow_window
        {
            int64_t room = std::min(window_clamp, Space(unread)) - rcv_ssthresh;
            if (room > 0)
            {
                int64_t incr = std::max<int64_t>(2 * mss, 2 * (int64_t)len);
                rcv_ssthresh += std::min(room, incr);
            }
        }
    }

    // after a read: copied bytes read in all, unread still queued, ooo held out of order
    void Read(int64_t now_us, uint64_t copied, uint64_t unread, uint64_t ooo)
    {
        int64_t time = now_us - space_time_us;
        if (!established || rtt_us8 == 0 || time < (rtt_us8 >> 3))
        {
            return;
        }
        int64_t got = (int64_t)(copied - space_seq) - (int64_t)unread;
        if (got > space)
        {
            if (Traced())
            {
                // as Linux's tcp:tcp_rcvbuf_grow tracepoint prints it (fields it has)
                std::fprintf(stderr,
                             "tcp_rcvbuf_grow: t_us=%lld time=%lld rtt_us=%lld copied=%lld inq=%llu "
                             "space=%lld scaling_ratio=%u rcvbuf=%lld rcv_ssthresh=%lld "
                             "window_clamp=%lld rcv_wnd=%lld sport=%u\n",
                             (long long)now_us, (long long)time, (long long)(rtt_us8 >> 3),
                             (long long)(copied - space_seq), (unsigned long long)unread,
                             (long long)space, ratio, (long long)rcvbuf, (long long)rcv_ssthresh,
                             (long long)window_clamp, (long long)rcv_wnd, port);
            }
            Grow(got, ooo);
        }
        space_seq = copied;
        space_time_us = now_us;
    }

    // tcp_rcvbuf_grow: the buffer for a window of 2·got·(1 + 2·(got − space)/space) and
    // the out-of-order span, at most tcp_rmem[2]; the clamp with it
    void Grow(int64_t got, uint64_t ooo)
    {
        int64_t old = space;
        space = got;
        int64_t win = got << 1;
        win += ((win << 1) * (got - old)) / std::max<int64_t>(old, 1);
        win += (int64_t)ooo;
        int64_t buf = std::min(SpaceFromWin(win), rmem_max);
        if (buf > rcvbuf)
        {
            rcvbuf = buf;
            window_clamp = WinFromSpace(buf);
        }
    }

    static int64_t AlignUp(int64_t x, int64_t unit)
    {
        return (x + unit - 1) / unit * unit;
    }

    // the window to offer with rcv_nxt where it is (tcp_select_window), in bytes
    int64_t Select(uint32_t rcv_nxt, uint64_t unread)
    {
        int64_t unit = int64_t{1} << wscale;
        int64_t allowed = WinFromSpace(rcvbuf);
        int64_t free_space = allowed - (int64_t)unread; // tcp_space
        int64_t full = std::min(window_clamp, allowed);
        free_space = std::max<int64_t>(0, free_space) / unit * unit;
        int64_t w;
        if (free_space < full / 2 && (free_space < allowed / 16 || free_space < mss))
        {
            w = 0;
        }
        else
        {
            w = AlignUp(std::min(free_space, rcv_ssthresh), unit);
        }
        int64_t cur = std::max<int64_t>(0, (int32_t)(rcv_wup + (uint32_t)rcv_wnd - rcv_nxt));
        if (w < cur) // never shrink what was offered
        {
            w = AlignUp(cur, unit);
        }
        rcv_wnd = w;
        rcv_wup = rcv_nxt;
        return w;
    }
};

// itb-udt: ITB's UDT endpoint (UDT4, Debian's libudt), one transfer per process, with
// the logs of `flow` (docs/flow.md, docs/profile.md):
//
//   itb-udt recv --listen ADDR:PORT --bytes V --log FILE.csv --summary FILE.json
//                [--interval-us 100000] [--accept-timeout-s 30] [--idle-timeout-s 60]
//   itb-udt send --to ADDR:PORT --bytes V --profile T_US:BPS,... --log FILE.csv
//                --summary FILE.json [--interval-us 100000] [--connect-timeout-s 10]
//   itb-udt send --to ADDR:PORT --bytes V --cc native [--max-rate-bps R] --log FILE.csv
//                --summary FILE.json [--interval-us 100000]
//
// The sender's rate is set by ITB's own rate-based controller (a CCC subclass: a fixed
// packet period from the rate, a window that never limits, no reaction to loss; UDT
// still retransmits what is lost), changed at the profile's dates by a timer thread, as
// RR-6874 did with UDT's blast controller. With `--cc native` the sender keeps UDT4's own
// congestion control (CUDTCC: its rate-based DAIMD, as UDT is benchmarked), capped at R
// by UDT_MAXBW when given. Rates are payload bit/s. The receiver answers
// the last byte with one byte, so the sender's end is the delivery of everything.
// Exit codes: 0 ok, 2 usage, 3 wrong volume, 4 timeout or connection failure.

#include <udt/udt.h>
#include <udt/ccc.h>

#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int EXIT_USAGE = 2, EXIT_VOLUME = 3, EXIT_NET = 4;
constexpr int PACKET = 1500;               // UDT_MSS: the IP packet
constexpr int PAYLOAD = PACKET - 28 - 16;  // minus IPv4 + UDP and UDT's data header

struct Fail {
    int code;
    std::string msg;
};

uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

void sleep_until_ns(uint64_t t) {
    timespec ts{time_t(t / 1000000000ull), long(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
}

std::string udt_error() { return UDT::getlasterror().getErrorMessage(); }

// ---- the rate controller --------------------------------------------------------------

// The profile's first rate: UDT makes the controller when it connects, and a packet
// sent before the rate is set would wait a whole default period.
std::atomic<uint64_t> initial_bps{1000000};

class FixedRate : public CCC {
public:
    FixedRate() {
        m_dCWndSize = 1e7;  // packets: the window never limits
        rate(initial_bps.load());
    }
    // payload bit/s → the period between two data packets, µs
    void rate(uint64_t bps) { m_dPktSndPeriod = PAYLOAD * 8.0 * 1e6 / double(bps); }
    void init() override { m_dCWndSize = 1e7; }
    void onLoss(const int32_t*, int) override {}  // no reaction: the rate is the profile's
    void onTimeout() override {}
};

// ---- arguments -------------------------------------------------------------------------

struct Args {
    std::map<std::string, std::string> kv;
    std::string get(const std::string& k, const char* dflt = nullptr) const {
        auto it = kv.find(k);
        if (it != kv.end()) return it->second;
        if (dflt) return dflt;
        throw Fail{EXIT_USAGE, "--" + k + " is required"};
    }
    double num(const std::string& k, const char* dflt) const {
        std::string v = get(k, dflt);
        char* end = nullptr;
        double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !std::isfinite(x) || x < 0) throw Fail{EXIT_USAGE, "--" + k + ": bad number " + v};
        return x;
    }
};

Args parse(int argc, char** argv, const std::vector<std::string>& known) {
    Args a;
    for (int i = 2; i < argc; i += 2) {
        std::string k = argv[i];
        if (k.rfind("--", 0) != 0 || i + 1 >= argc) throw Fail{EXIT_USAGE, "expected --option value, got " + k};
        k = k.substr(2);
        bool ok = false;
        for (auto& n : known) ok = ok || n == k;
        if (!ok) throw Fail{EXIT_USAGE, "unknown option --" + k};
        a.kv[k] = argv[i + 1];
    }
    return a;
}

sockaddr_in address(const std::string& s) {
    auto colon = s.rfind(':');
    if (colon == std::string::npos) throw Fail{EXIT_USAGE, "expected IPV4:PORT, got " + s};
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(uint16_t(std::atoi(s.c_str() + colon + 1)));
    if (inet_pton(AF_INET, s.substr(0, colon).c_str(), &sa.sin_addr) != 1)
        throw Fail{EXIT_USAGE, "bad IPv4 address in " + s};
    return sa;
}

// (µs, bit/s) steps: first at 0, increasing, rates above 0
std::vector<std::pair<uint64_t, uint64_t>> profile(const std::string& spec) {
    std::vector<std::pair<uint64_t, uint64_t>> steps;
    size_t pos = 0;
    while (pos <= spec.size()) {
        size_t comma = spec.find(',', pos);
        std::string part = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        size_t colon = part.find(':');
        char *e1 = nullptr, *e2 = nullptr;
        if (colon == std::string::npos) throw Fail{EXIT_USAGE, "--profile: expected T_US:BPS, got " + part};
        std::string t = part.substr(0, colon), r = part.substr(colon + 1);
        unsigned long long tu = std::strtoull(t.c_str(), &e1, 10), rb = std::strtoull(r.c_str(), &e2, 10);
        if (t.empty() || r.empty() || *e1 || *e2 || rb == 0) throw Fail{EXIT_USAGE, "--profile: bad step " + part};
        if (steps.empty() ? tu != 0 : tu <= steps.back().first)
            throw Fail{EXIT_USAGE, "--profile: the first date is 0 and dates increase"};
        steps.emplace_back(tu, rb);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return steps;
}

// ---- output ----------------------------------------------------------------------------

std::string jnum(const char* key, double v, bool last = false) {
    char b[96];
    std::snprintf(b, sizeof b, "\"%s\": %.17g%s", key, v, last ? "" : ", ");
    return b;
}

// The CPU time of this process (getrusage(RUSAGE_SELF), all threads), as flow reports it.
std::string cpu_json() {
    struct rusage ru {};
    if (getrusage(RUSAGE_SELF, &ru) != 0) return "\"cpu\": null, ";
    auto secs = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
    return "\"cpu\": {" + jnum("user_s", secs(ru.ru_utime)) + jnum("system_s", secs(ru.ru_stime), true) + "}, ";
}

std::string jint(const char* key, uint64_t v, bool present = true) {
    char b[96];
    if (present)
        std::snprintf(b, sizeof b, "\"%s\": %llu, ", key, (unsigned long long)v);
    else
        std::snprintf(b, sizeof b, "\"%s\": null, ", key);
    return b;
}

std::string jstr(const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        if (c >= 0 && c < 0x20) continue;
        o += c;
    }
    return o + "\"";
}

void write_file(const std::string& path, const std::string& text) {
    std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) throw Fail{1, "cannot write " + path + ": " + std::strerror(errno)};
    bool ok = std::fputs(text.c_str(), f) >= 0 && std::fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) throw Fail{1, "cannot write " + path};
}

// A sampler writing one CSV row per interval on the grid origin + k·interval.
class Sampler {
public:
    Sampler(const std::string& path, const char* header, uint64_t interval_ns)
        : path_(path), interval_(interval_ns) {
        f_ = std::fopen(path.c_str(), "w");
        if (!f_) throw Fail{1, "cannot write " + path + ": " + std::strerror(errno)};
        std::fprintf(f_, "%s\n", header);
    }
    template <class Row> void start(uint64_t origin, Row row) {
        th_ = std::thread([this, origin, row] {
            for (uint64_t k = 1; !stop_.load(); ++k) {
                uint64_t t = origin + k * interval_;
                if (now_ns() < t) sleep_until_ns(std::min<uint64_t>(t, now_ns() + 100000000ull));
                if (now_ns() < t) { --k; continue; }
                std::lock_guard<std::mutex> g(m_);
                if (!stop_.load()) row(f_, now_ns(), false);
            }
        });
    }
    template <class Row> void finish(Row row) {
        stop_.store(true);
        if (th_.joinable()) th_.join();
        row(f_, now_ns(), true);
        bool ok = std::fflush(f_) == 0 && fsync(fileno(f_)) == 0;
        if (std::fclose(f_) != 0 || !ok) throw Fail{1, "cannot write " + path_};
    }

private:
    std::string path_;
    uint64_t interval_;
    FILE* f_;
    std::thread th_;
    std::atomic<bool> stop_{false};
    std::mutex m_;
};

// ---- recv ------------------------------------------------------------------------------

int recv_main(const Args& a) {
    sockaddr_in sa = address(a.get("listen"));
    const uint64_t want = uint64_t(a.num("bytes", nullptr));
    const uint64_t interval = uint64_t(a.num("interval-us", "100000")) * 1000;
    const int accept_ms = int(a.num("accept-timeout-s", "30") * 1000), idle_ms = int(a.num("idle-timeout-s", "60") * 1000);
    if (interval < 1000000) throw Fail{EXIT_USAGE, "--interval-us must be at least 1000"};
    std::atomic<uint64_t> got{0}, interval_bytes{0};
    uint64_t first = 0, last = 0, accept_ns = 0;
    std::string error;
    int code = 0;
    Sampler log(a.get("log"), "t_ns,bytes,streams_open", interval);
    UDTSOCKET srv = UDT::socket(AF_INET, SOCK_STREAM, 0);
    bool reuse = true;
    UDT::setsockopt(srv, 0, UDT_REUSEADDR, &reuse, sizeof reuse);
    if (UDT::bind(srv, (sockaddr*)&sa, sizeof sa) == UDT::ERROR || UDT::listen(srv, 1) == UDT::ERROR)
        throw Fail{EXIT_NET, "cannot listen on " + a.get("listen") + ": " + udt_error()};
    std::printf("ready\n");
    std::fflush(stdout);
    // accept with a deadline: UDT's accept blocks, so poll its epoll
    int ep = UDT::epoll_create();
    int in = UDT_EPOLL_IN;
    UDT::epoll_add_usock(ep, srv, &in);
    std::set<UDTSOCKET> ready;
    if (UDT::epoll_wait(ep, &ready, nullptr, accept_ms) <= 0) {
        UDT::close(srv);
        throw Fail{EXIT_NET, "no connection within " + a.get("accept-timeout-s", "30") + " s"};
    }
    sockaddr_in peer{};
    int plen = sizeof peer;
    UDTSOCKET s = UDT::accept(srv, (sockaddr*)&peer, &plen);
    accept_ns = now_ns();
    UDT::close(srv);
    if (s == UDT::INVALID_SOCK) throw Fail{EXIT_NET, "accept: " + udt_error()};
    UDT::setsockopt(s, 0, UDT_RCVTIMEO, &idle_ms, sizeof idle_ms);
    std::atomic<int> open{1};
    log.start(accept_ns, [&](FILE* f, uint64_t t, bool) {
        std::fprintf(f, "%llu,%llu,%d\n", (unsigned long long)t, (unsigned long long)interval_bytes.exchange(0), open.load());
    });
    std::vector<char> buf(1 << 20);
    while (got.load() < want) {
        int n = UDT::recv(s, buf.data(), int(std::min<uint64_t>(buf.size(), want - got.load())), 0);
        if (n == UDT::ERROR || n == 0) {
            code = EXIT_NET;
            error = "stream 0: " + (n == 0 ? std::string("no data within the idle timeout") : udt_error());
            break;
        }
        uint64_t t = now_ns();
        if (!first) first = t;
        last = t;
        got += uint64_t(n);
        interval_bytes += uint64_t(n);
    }
    open.store(0);
    if (!code) {
        char one = 1;
        UDT::send(s, &one, 1, 0);  // the sender ends when everything arrived
    }
    log.finish([&](FILE* f, uint64_t t, bool) {
        uint64_t rest = interval_bytes.exchange(0);
        if (rest || true) std::fprintf(f, "%llu,%llu,0\n", (unsigned long long)(last ? last : t), (unsigned long long)rest);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the answer leave
    UDT::close(s);
    std::string sum = "{\"format\": 1, \"role\": \"recv\", \"protocol\": \"udt\", \"streams\": 1, " + jint("bytes", got) +
                      "\"per_stream_bytes\": [" + std::to_string(got.load()) + "], " + jint("first_byte_ns", first, first) +
                      jint("last_byte_ns", last, first) + jint("accept_ns", accept_ns) + jint("expected_bytes", want);
    double gp = (first && last > first) ? double(got) * 8e9 / double(last - first) : NAN;
    sum += std::isfinite(gp) ? jnum("goodput_bps", gp) : std::string("\"goodput_bps\": null, ");
    if (!code && got != want) {
        code = EXIT_VOLUME;
        error = "received " + std::to_string(got.load()) + " of " + std::to_string(want) + " bytes";
    }
    sum += cpu_json() + std::string("\"ok\": ") + (code ? "false" : "true") + ", \"error\": " + (code ? jstr(error) : "null") + "}\n";
    write_file(a.get("summary"), sum);
    if (code) throw Fail{code, error};
    return 0;
}

// ---- send ------------------------------------------------------------------------------

int send_main(const Args& a) {
    sockaddr_in sa = address(a.get("to"));
    const uint64_t want = uint64_t(a.num("bytes", nullptr));
    const uint64_t interval = uint64_t(a.num("interval-us", "100000")) * 1000;
    const std::string control = a.get("cc", "fixed");
    if (control != "fixed" && control != "native") throw Fail{EXIT_USAGE, "--cc: fixed or native"};
    const bool native = control == "native";
    if (native && a.kv.count("profile")) throw Fail{EXIT_USAGE, "--profile is for --cc fixed; native takes --max-rate-bps"};
    if (!native && a.kv.count("max-rate-bps")) throw Fail{EXIT_USAGE, "--max-rate-bps is for --cc native"};
    auto steps = native ? std::vector<std::pair<uint64_t, uint64_t>>{} : profile(a.get("profile"));
    const uint64_t max_bps = native ? uint64_t(a.num("max-rate-bps", "0")) : 0;
    if (interval < 1000000) throw Fail{EXIT_USAGE, "--interval-us must be at least 1000"};
    if (!native) initial_bps.store(steps[0].second);
    UDTSOCKET s = UDT::socket(AF_INET, SOCK_STREAM, 0);
    int mss = PACKET;
    UDT::setsockopt(s, 0, UDT_MSS, &mss, sizeof mss);
    if (native) {
        // UDT_MAXBW caps the packets (of PACKET bytes) per second: PACKET / PAYLOAD of the
        // payload rate asked for, in bytes/s (-1: no cap)
        int64_t maxbw = max_bps ? int64_t(double(max_bps) / 8.0 * PACKET / PAYLOAD) : -1;
        UDT::setsockopt(s, 0, UDT_MAXBW, &maxbw, sizeof maxbw);
    } else {
        UDT::setsockopt(s, 0, UDT_CC, new CCCFactory<FixedRate>, sizeof(CCCFactory<FixedRate>));
    }
    int buf = 64 << 20;
    UDT::setsockopt(s, 0, UDT_SNDBUF, &buf, sizeof buf);
    UDT::setsockopt(s, 0, UDP_SNDBUF, &buf, sizeof buf);
    const uint64_t t_connect0 = now_ns();
    if (UDT::connect(s, (sockaddr*)&sa, sizeof sa) == UDT::ERROR)
        throw Fail{EXIT_NET, "cannot connect to " + a.get("to") + ": " + udt_error()};
    const uint64_t connect_ns = now_ns();
    (void)t_connect0;
    FixedRate* cc = nullptr;
    int len = 0;
    if (!native) {
        UDT::getsockopt(s, 0, UDT_CC, &cc, &len);
        if (!cc) throw Fail{1, "the rate controller is not in place"};
    }
    std::mutex changes_m;
    std::vector<std::pair<uint64_t, uint64_t>> changes;
    std::atomic<bool> done{false};
    Sampler log(a.get("log"), "t_ns,stream,rtt_us,total_retrans,pacing_rate_bps,delivery_rate_bps,pkt_sent,pkt_snd_loss,flight", interval);
    const uint64_t start = now_ns();
    if (cc) cc->rate(steps[0].second);
    std::thread timer([&] {
        for (size_t k = 1; k < steps.size() && !done.load(); ++k) {
            uint64_t at = start + steps[k].first * 1000;
            while (!done.load() && now_ns() < at) sleep_until_ns(std::min<uint64_t>(at, now_ns() + 100000000ull));
            if (done.load()) return;
            cc->rate(steps[k].second);
            std::lock_guard<std::mutex> g(changes_m);
            changes.emplace_back(now_ns(), steps[k].second);
        }
    });
    // one row per interval, named as flow's tcp_info columns where they mean the same:
    // pacing_rate_bps the controller's payload rate, delivery_rate_bps UDT's send rate
    auto row = [](FILE* f, uint64_t t, const UDT::TRACEINFO& p) {
        double pace = p.usPktSndPeriod > 0 ? PAYLOAD * 8.0 * 1e6 / p.usPktSndPeriod : 0;
        std::fprintf(f, "%llu,0,%.0f,%d,%.0f,%.0f,%lld,%d,%d\n", (unsigned long long)t, p.msRTT * 1000,
                     p.pktRetransTotal, pace, p.mbpsSendRate * 1e6, (long long)p.pktSentTotal,
                     p.pktSndLossTotal, p.pktFlightSize);
    };
    log.start(start, [&](FILE* f, uint64_t t, bool) {
        UDT::TRACEINFO p;
        if (UDT::perfmon(s, &p, false) == UDT::ERROR) return;
        row(f, t, p);
    });
    std::vector<char> data(1 << 20);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (auto& c : data) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; c = char(x); }
    uint64_t sent = 0;
    int code = 0;
    std::string error;
    while (sent < want) {
        int n = UDT::send(s, data.data(), int(std::min<uint64_t>(data.size(), want - sent)), 0);
        if (n == UDT::ERROR) { code = EXIT_NET; error = "stream 0: " + udt_error(); break; }
        sent += uint64_t(n);
    }
    uint64_t end = 0;
    if (!code) {
        int idle_ms = int(a.num("idle-timeout-s", "60") * 1000);
        UDT::setsockopt(s, 0, UDT_RCVTIMEO, &idle_ms, sizeof idle_ms);
        char one = 0;
        if (UDT::recv(s, &one, 1, 0) != 1) { code = EXIT_NET; error = "stream 0: no end of transfer from the receiver"; }
        end = now_ns();
    }
    done.store(true);
    timer.join();
    UDT::TRACEINFO p{};
    UDT::perfmon(s, &p, false);
    log.finish([&](FILE* f, uint64_t t, bool) {
        row(f, t, p);
    });
    UDT::close(s);
    std::string ch = "[";
    for (size_t i = 0; i < changes.size(); ++i)
        ch += (i ? ", [" : "[") + std::to_string(changes[i].first) + ", " + std::to_string(changes[i].second) + "]";
    ch += "]";
    std::string prof = native ? "null" : "[";
    for (size_t i = 0; i < steps.size(); ++i)
        prof += (i ? ", [" : "[") + std::to_string(steps[i].first) + ", " + std::to_string(steps[i].second) + "]";
    if (!native) prof += "]";
    uint64_t segs = uint64_t(p.pktSentTotal);
    uint64_t payload_sent = sent + uint64_t(p.pktRetransTotal) * PAYLOAD;
    std::string sum = "{\"format\": 1, \"role\": \"send\", \"protocol\": \"udt\", \"streams\": 1, \"cc\": \"udt\", \"cc_in_use\": " +
                      std::string(native ? "\"udt-native\", " : "\"udt\", ") +
                      jint("bytes", want) + jint("start_ns", start) + jint("end_ns", end, end) + jint("connect_ns", connect_ns);
    sum += end > start ? jnum("goodput_bps", double(want) * 8e9 / double(end - start)) : std::string("\"goodput_bps\": null, ");
    sum += jint("total_retrans", uint64_t(p.pktRetransTotal)) + jint("rate_bps", max_bps, max_bps > 0) + "\"rate_changes\": " + ch +
           ", \"profile\": " + prof + ", \"enforce\": " + (native ? "null" : "\"pacing\"") + ", \"sent\": {" + jint("bytes", payload_sent) +
           jint("retrans_bytes", uint64_t(p.pktRetransTotal) * PAYLOAD) + jint("segments", segs) +
           jint("data_segments", segs) + "\"header_bytes\": " + std::to_string(segs * (PACKET - PAYLOAD)) + "}, ";
    sum += cpu_json() + std::string("\"ok\": ") + (code ? "false" : "true") + ", \"error\": " + (code ? jstr(error) : "null") + "}\n";
    write_file(a.get("summary"), sum);
    if (code) throw Fail{code, error};
    return 0;
}

void die_with_parent() {
    const char* want = std::getenv("ITB_DIE_WITH_PARENT");
    if (!want) return;
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != std::atoi(want)) std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
    die_with_parent();
    std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "--help" || cmd == "-h" || cmd.empty()) {
        std::printf("itb-udt recv --listen ADDR:PORT --bytes V --log FILE.csv --summary FILE.json\n"
                    "             [--interval-us 100000] [--accept-timeout-s 30] [--idle-timeout-s 60]\n"
                    "itb-udt send --to ADDR:PORT --bytes V --profile T_US:BPS,... --log FILE.csv\n"
                    "             --summary FILE.json [--interval-us 100000] [--idle-timeout-s 60]\n"
                    "itb-udt send --to ADDR:PORT --bytes V --cc native [--max-rate-bps R] --log FILE.csv\n"
                    "             --summary FILE.json [--interval-us 100000] [--idle-timeout-s 60]\n");
        return cmd.empty() ? EXIT_USAGE : 0;
    }
    UDT::startup();
    int rc = 0;
    try {
        if (cmd == "recv")
            rc = recv_main(parse(argc, argv, {"listen", "bytes", "log", "summary", "interval-us", "accept-timeout-s", "idle-timeout-s"}));
        else if (cmd == "send")
            rc = send_main(parse(argc, argv, {"to", "bytes", "profile", "cc", "max-rate-bps", "log", "summary", "interval-us", "idle-timeout-s"}));
        else
            throw Fail{EXIT_USAGE, "unknown command " + cmd + " (recv or send)"};
    } catch (const Fail& f) {
        std::fprintf(stderr, "itb-udt: %s\n", f.msg.c_str());
        rc = f.code;
    }
    UDT::cleanup();
    return rc;
}

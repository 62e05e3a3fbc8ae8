"""A repetition as itb-sim's configuration: each link direction's rate, delay, queue and
loss as the testbed has them (an access link's token-bucket queue included), each
transfer with its port, cap and profile, each link change; and what a simulation refuses."""

from __future__ import annotations

import json

from itb.backends.sim import config
from itb.engine import processes
from itb.scenario import load_testbed
from itb.scenario.scenario import timeline_on

TOPO = load_testbed(None, {"access_rate": "500Mbit"})  # 2 pairs, 1 Gbit/s, 20 ms, 1 BDP


def events(data):
    return list(timeline_on(TOPO, data, "t").experiment.events)


def test_links_transfers_and_changes_become_one_record_each():
    ev = events(
        {
            "transfer": [
                {"id": "a", "src": "l1", "dst": "r1", "at": "1s", "volume": "1MB",
                 "cc": "cubic", "rate": "100Mbit"},
                {"id": "b", "src": "l2", "dst": "r2", "at": "0s", "volume": "2MB",
                 "cc": "reno", "streams": 2, "profile": [[0, "50Mbit"], [1, 0], [2, "10Mbit"]]},
            ],
            "set": [{"id": "s", "at": "3s", "link": "rl-rr", "rate": "500Mbit"}],
        }
    )  # fmt: skip
    lines = config.config(TOPO, ev, 7, 60_000_000, 100_000, 1, 2).splitlines()
    assert lines[0] == "run 7 60000000 100000 1000 1 2"
    links = {
        d["name"]: d for d in (json.loads(x[5:]) for x in lines if x.startswith("link "))
    }  # (each link one JSON object, its directions as linkem reads them)
    bott = links["rl-rr"]
    # 1 Gbit/s, 10 ms each way, one BDP of queue: 1e9 · 0.020 / 8 = 2 500 000 bytes
    none = {"model": "none", "p": 0.0, "r": 1.0, "loss_good": 0.0, "loss_bad": 1.0}
    for d in ("ab", "ba"):
        assert bott[d] == {
            "rate_bps": 1_000_000_000, "delay_us": 10_000, "queue_bytes": 2_500_000,
            "queue_packets": None, "loss": none,
        }  # fmt: skip
    acc = links["l1-rl"]
    # 500 Mbit/s by a token bucket whose queue holds 20 ms: 500e6 / 8000 · 20 = 1 250 000
    assert (acc["emulated"], acc["a"], acc["a_addr"], acc["b"], acc["b_addr"], acc["mtu"]) == (
        False, "l1", "198.18.1.1/24", "rl", "198.18.1.2/24", 1500,
    )  # fmt: skip
    assert (acc["ab"]["rate_bps"], acc["ab"]["delay_us"], acc["ab"]["queue_bytes"]) == (
        500_000_000, 0, 1_250_000,
    )  # fmt: skip
    tcp = [x for x in lines if x.startswith("tcp ")]  # in the timeline's order: b at 0 s
    assert tcp[0] == (
        "tcp b l2 r2 198.18.4.1 20001 0 2000000 2 reno - 0:50000000,1000000:0,2000000:10000000 "
        "pacing 0.0 16777216 1"  # the hosts' socket buffers: 16 MiB at least; awaited
    )
    assert tcp[1].startswith("tcp a l1 r1 198.18.3.1 20002 1000000 1000000 1 cubic 100000000 - ")
    assert "set s 3000000 rl-rr both 500000000 -" in lines


def test_receivers_start_from_linuxs_buffer_unless_the_testbed_opens_their_window():
    ev = events({"transfer": [{"id": "a", "src": "l1", "dst": "r1", "at": "0s",
                               "volume": "1MB", "cc": "reno"}]})  # fmt: skip
    lines = config.config(TOPO, ev, 7, 60_000_000, 100_000, 1, 2).splitlines()
    # tcp_rmem "4096 131072 16777216" on the hosts: the window from 131 072 bytes, grown
    # up to the 16 MiB buffer
    assert "rcvwin linux 131072 16777216" in lines
    assert lines.index("rcvwin linux 131072 16777216") < next(
        i for i, x in enumerate(lines) if x.startswith("tcp ")
    )
    opened = TOPO.model_copy(update={"open_receive_window": True})
    lines = config.config(opened, ev, 7, 60_000_000, 100_000, 1, 2).splitlines()
    assert not any(x.startswith("rcvwin") for x in lines)


def test_a_testbed_that_acks_every_segment_is_simulated_with_an_ack_per_segment():
    ev = events({"transfer": [{"id": "a", "src": "l1", "dst": "r1", "at": "0s",
                               "volume": "1MB", "cc": "reno"}]})  # fmt: skip
    # by default one ACK per two segments (Linux's bulk receiver, ns-3's DelAckCount 2)
    lines = config.config(TOPO, ev, 7, 60_000_000, 100_000, 1, 2).splitlines()
    assert not any(x.startswith("delack") for x in lines)
    # ack_every_segment: the testbed's routes carry quickack, so one ACK per segment
    acking = TOPO.model_copy(update={"ack_every_segment": True})
    lines = config.config(acking, ev, 7, 60_000_000, 100_000, 1, 2).splitlines()
    assert "delack 1" in lines
    assert lines.index("delack 1") < next(i for i, x in enumerate(lines) if x.startswith("tcp "))


def test_what_a_simulator_has_not_is_refused_with_the_reason():
    cmd = events({"command": [{"id": "c", "host": "l1", "at": "0s", "argv": ["true"]}]})
    assert "a command runs a program on a host" in config.unsupported(TOPO, cmd)
    udt = events(
        {"transfer": [{"id": "u", "src": "l1", "dst": "r1", "at": "0s", "volume": "1MB",
                       "protocol": "udt", "rate": "10Mbit"}]}
    )  # fmt: skip
    assert config.unsupported(TOPO, udt) == "u: UDT is not simulated"
    fwd = events({"set": [{"id": "d", "at": "1s", "link": "rl-rr", "direction": "forward",
                            "delay": "5ms"}]})  # fmt: skip
    assert "on both directions only" in config.unsupported(TOPO, fwd)
    assert config.unsupported(TOPO, []) is None


def test_a_sleep_command_is_a_timer_and_a_transfer_says_whether_it_is_awaited():
    ev = events(
        {
            "transfer": [{"id": "a", "src": "l1", "dst": "r1", "at": "0s", "volume": "1MB",
                          "cc": "reno", "wait": False}],
            "command": [{"id": "end", "host": "l1", "at": "1s", "argv": ["sleep", "2.5"]}],
        }
    )  # fmt: skip
    assert config.unsupported(TOPO, ev) is None
    lines = config.config(TOPO, ev, 7, 60_000_000, 100_000, 1, 1).splitlines()
    assert "timer end 1000000 2500000 1" in lines  # from 1 s, 2.5 s long, awaited
    assert next(x for x in lines if x.startswith("tcp a ")).endswith(" 0")  # not awaited
    # anything else a command could be is a program: refused (sleep's "inf" is a timer
    # that ends with the timeline: tests/unit/test_sim_bad_input.py)
    for argv in (["sleep", "1", "2"], ["sleep", "-1"], ["sleep", "x"], ["/bin/sleep", "1"]):
        cmd = events({"command": [{"id": "c", "host": "l1", "at": "0s", "argv": argv}]})
        assert "only `sleep SECONDS`, a timer, is simulated" in config.unsupported(TOPO, cmd)


def test_a_ping_pong_is_one_record_with_its_message_answer_and_count():
    ev = events(
        {"pingpong": [{"id": "pa", "src": "l2", "dst": "r2", "at": "1s", "count": 200,
                       "size": "1MB", "reply_size": "2MB", "cc": "reno", "rate": "100Mbit"}]}
    )  # fmt: skip
    (pp,) = [x for x in config.config(TOPO, ev, 7, 60_000_000, 100_000, 1, 2).splitlines()
             if x.startswith("pingpong ")]  # fmt: skip
    # id, hosts, r2's address, the first port, 1 s, 1 MB answered by 2 MB, 200 times,
    # reno, a 100 Mbit/s cap, the hosts' 16 MiB socket buffers, awaited
    assert pp == (
        "pingpong pa l2 r2 198.18.4.1 20001 1000000 1000000 2000000 200 reno 100000000 16777216 1"
    )
    # without reply_size, the message answers itself
    ev = events({"pingpong": [{"id": "p", "src": "l1", "dst": "r1", "count": 3, "size": "10kB"}]})
    (pp,) = [x for x in config.config(TOPO, ev, 7, 1, 1, 1, 1).splitlines()
             if x.startswith("pingpong ")]  # fmt: skip
    assert " 10000 10000 3 cubic - " in pp and config.unsupported(TOPO, ev) is None


def test_a_udp_stream_is_one_record_with_its_rate_size_arrivals_and_drain():
    ev = events(
        {"udp": [{"id": "u", "src": "l2", "dst": "r2", "at": "2s", "rate": "50Mbit",
                  "duration": "3s", "size": 1000, "arrivals": "poisson", "wait": False}]}
    )  # fmt: skip
    assert config.unsupported(TOPO, ev) is None
    (u,) = [x for x in config.config(TOPO, ev, 7, 1, 1, 1, 1).splitlines() if x.startswith("udp ")]
    seed = ev[0].seed
    # id, hosts, r2's address, the first port, 2 s, 50 Mbit/s of payload for 3 s in
    # 1000-byte datagrams, Poisson with its seed, not awaited, the receiver's second of drain
    assert (
        u == f"udp u l2 r2 198.18.4.1 20001 2000000 50000000 3000000 1000 poisson {seed} 0 1000000"
    )
    # the receiver drains as long as the engine's does
    assert config.UDP_DRAIN_US == processes.UDP_DRAIN_S * 1e6

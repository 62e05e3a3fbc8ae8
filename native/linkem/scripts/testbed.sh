#!/bin/bash
# Three-namespace test bed for linkem:  lk-a:eth0 <-> lk-em:a0 | lk-em:b0 <-> lk-b:eth0
# usage: testbed.sh up | down
set -u
NS="lk-a lk-em lk-b"
down() {
    for n in $NS; do
        for p in $(ip netns pids "$n" 2>/dev/null); do kill "$p" 2>/dev/null; done
    done
    sleep 0.2
    for n in $NS; do ip netns del "$n" 2>/dev/null; done
    if [ -f /tmp/lk-testbed.sysctl ]; then
        read -r r w < <(tr '\n' ' ' < /tmp/lk-testbed.sysctl)
        sysctl -qw net.core.rmem_max="$r" net.core.wmem_max="$w"
        rm -f /tmp/lk-testbed.sysctl
    fi
    return 0
}
up() {
    down
    set -e
    for n in $NS; do ip netns add "$n"; ip -n "$n" link set lo up; done
    ip link add eth0 netns lk-a type veth peer name a0 netns lk-em
    ip link add eth0 netns lk-b type veth peer name b0 netns lk-em
    for i in a0 b0; do
        ip netns exec lk-em sysctl -qw net.ipv6.conf.$i.disable_ipv6=1
        ip -n lk-em link set $i up
    done
    ip -n lk-a addr add 198.18.0.1/24 dev eth0
    ip -n lk-b addr add 198.18.0.2/24 dev eth0
    ip -n lk-a link set eth0 up
    ip -n lk-b link set eth0 up
    for n in lk-a lk-b; do
        ip netns exec $n sysctl -qw net.ipv4.tcp_rmem="4096 131072 536870912" net.ipv4.tcp_wmem="4096 131072 536870912" \
            net.ipv4.tcp_no_metrics_save=1
    done
    # rmem_max/wmem_max are not per-namespace: raise them host-wide (iperf3 -w)
    # and put the old values back on 'down'.
    [ -f /tmp/lk-testbed.sysctl ] || sysctl -n net.core.rmem_max net.core.wmem_max > /tmp/lk-testbed.sysctl
    sysctl -qw net.core.rmem_max=536870912 net.core.wmem_max=536870912
    set +e
}
"$1"

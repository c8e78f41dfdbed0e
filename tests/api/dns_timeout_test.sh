#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A MASTER_ADDR name whose DNS server never answers must fail at the rendezvous deadline, not
# after the resolver's retries (minutes). Needs root for a private mount + network namespace in
# which /etc/resolv.conf points at 127.0.0.1, where test_api_ranks holds a silent UDP socket.
#   dns_timeout_test.sh <test_api_ranks>
set -u
bin=$1
if [[ $(id -u) != 0 ]] || ! unshare --mount --net true 2>/dev/null; then
    echo "skip: needs root and unshare --mount --net"
    exit 77
fi
conf=$(mktemp /tmp/sddp-resolv.XXXXXX)
trap 'rm -f "$conf"' EXIT
echo "nameserver 127.0.0.1" >"$conf"
unshare --mount --net bash -c '
    set -e
    ip link set lo up
    mount --bind "$1" /etc/resolv.conf
    exec "$2" dns-timeout 1' _ "$conf" "$bin"

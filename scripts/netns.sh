#!/usr/bin/env bash
# Emulated multi-host network for Starling peers on one machine: N network namespaces
# joined by a bridge, each with its own address and an optional rate limit, so peers can
# run "on different hosts" with a bandwidth ceiling. Touches nothing outside its own
# namespaces: the bridge lives in a hub namespace, not on the host.
#
#   scripts/netns.sh up N [RATE]   namespaces starling-ns0..N-1 at 10.77.0.(i+1)/24, bridged
#                                  by starling-br0 in namespace starling-hub; RATE (e.g. 1gbit,
#                                  100mbit) adds a tbf qdisc on each namespace's veth
#   scripts/netns.sh down N        removes them all; succeeds when nothing is there
#   scripts/netns.sh exec I CMD... runs CMD in namespace starling-nsI
#   scripts/netns.sh burst RATE    prints the tbf bucket 'up' gives RATE, in bytes
#
# Needs root and iproute2 (ip, tc); exits 2 when either is missing or on bad arguments.
# netem is not available on this machine class, so there is rate limiting but no delay/loss.
set -euo pipefail

readonly PREFIX=starling-ns
readonly HUB=starling-hub
readonly BRIDGE=starling-br0
readonly SUBNET=10.77.0
readonly MAX_NAMESPACES=250  # host part .1 .. .250 of the /24

usage() {
  sed -n '7,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

die() {
  echo "netns.sh: $*" >&2
  exit 2
}

require_tools() {
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces and qdiscs); run with sudo"
  command -v ip >/dev/null || die "'ip' not found; install iproute2"
}

require_count() {
  [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le "$MAX_NAMESPACES" ] ||
    die "N must be 1..$MAX_NAMESPACES, got '$1'"
}

# tbf needs a bucket of at least one timer tick of traffic; 10 ms at RATE, 32 KiB minimum.
burst_bytes() {
  local rate=$1 number unit bits
  [[ "$rate" =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || die "RATE must look like 100mbit or 1gbit, got '$rate'"
  number=${BASH_REMATCH[1]}
  unit=${BASH_REMATCH[2]}
  case $unit in
    bit) bits=$number ;;
    kbit) bits=$((number * 1000)) ;;
    mbit) bits=$((number * 1000000)) ;;
    gbit) bits=$((number * 1000000000)) ;;
  esac
  local bytes=$((bits / 8 / 100))
  [ "$bytes" -lt 32768 ] && bytes=32768
  echo "$bytes"
}

# One namespace: veth pair, namespace end addressed, hub end on the bridge.
add_namespace() {
  local i=$1 rate=$2 ns="$PREFIX$1"
  ip netns add "$ns"
  ip link add "sl-veth$i" type veth peer name "sl-port$i"
  ip link set "sl-veth$i" netns "$ns"
  ip link set "sl-port$i" netns "$HUB"
  ip -n "$HUB" link set "sl-port$i" master "$BRIDGE" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$SUBNET.$((i + 1))/24" dev "sl-veth$i"
  ip -n "$ns" link set "sl-veth$i" up
  if [ -n "$rate" ]; then
    ip netns exec "$ns" tc qdisc add dev "sl-veth$i" root tbf rate "$rate" \
      burst "$(burst_bytes "$rate")" latency 50ms
  fi
}

cmd_up() {
  local n=$1 rate=${2:-}
  require_count "$n"
  [ -n "$rate" ] && { command -v tc >/dev/null || die "'tc' not found; install iproute2"; burst_bytes "$rate" >/dev/null; }
  cmd_down "$MAX_NAMESPACES" >/dev/null  # start clean, whatever was left before
  ip netns add "$HUB"
  ip -n "$HUB" link add "$BRIDGE" type bridge
  ip -n "$HUB" link set "$BRIDGE" up
  local i
  for ((i = 0; i < n; i++)); do add_namespace "$i" "$rate"; done
  echo "up: $n namespaces ${PREFIX}0..$PREFIX$((n - 1)) on $SUBNET.0/24 via $BRIDGE${rate:+, rate $rate}"
}

# Deleting a namespace deletes the veth ends inside it, and with them their peers.
cmd_down() {
  local n=$1 i removed=0
  require_count "$n"
  for ((i = 0; i < n; i++)); do
    if [ -e "/run/netns/$PREFIX$i" ]; then
      ip netns del "$PREFIX$i" && removed=$((removed + 1))
    fi
  done
  [ -e "/run/netns/$HUB" ] && ip netns del "$HUB"
  echo "down: removed $removed namespaces"
}

cmd_exec() {
  local i=$1
  shift
  [[ "$i" =~ ^[0-9]+$ ]] || die "I must be a namespace index, got '$i'"
  [ "$#" -ge 1 ] || die "exec needs a command"
  [ -e "/run/netns/$PREFIX$i" ] || die "namespace $PREFIX$i does not exist; run 'up' first"
  exec ip netns exec "$PREFIX$i" "$@"
}

main() {
  [ "$#" -ge 2 ] || usage
  local command=$1
  shift
  [ "$command" = burst ] && { [ "$#" -eq 1 ] || usage; burst_bytes "$1"; exit 0; }
  require_tools
  case $command in
    up) [ "$#" -le 2 ] || usage; cmd_up "$@" ;;
    down) [ "$#" -eq 1 ] || usage; cmd_down "$1" ;;
    exec) cmd_exec "$@" ;;
    *) usage ;;
  esac
}

main "$@"

#!/usr/bin/env bash
# Emulated multi-host network for Starling peers on one machine: N network namespaces
# joined by a bridge, each with its own address and an optional rate limit, so peers can
# run "on different hosts" with a bandwidth ceiling, some of them behind NAT routers like
# home machines. Touches nothing outside its own namespaces: the bridge lives in a hub
# namespace, not on the host, and each router forwards only inside its own namespace.
#
#   scripts/netns.sh up N [RATE] [--nat K:I,J,...]...
#                       namespaces starling-ns0..N-1 at 10.77.0.(i+1)/24, bridged by
#                       starling-br0 in namespace starling-hub; RATE (e.g. 1gbit, 100mbit)
#                       adds a tbf qdisc on each namespace's veth. --nat K:I,J,... puts
#                       namespaces I,J,... in home network K instead: 192.168.(K+1).(i+2)/24,
#                       default route via router namespace starling-nat<K> (10.77.0.(200+K) on
#                       the bridge), which masquerades with nftables and drops connections
#                       opened from outside: they can dial out but cannot be dialed.
#                       K is 0..49; with --nat, N is at most 199
#   scripts/netns.sh down N          removes them all, routers included; succeeds when nothing is there
#   scripts/netns.sh exec I CMD...   runs CMD in namespace starling-nsI
#   scripts/netns.sh addr I|natK     prints starling-nsI's own address, or router K's public one
#   scripts/netns.sh burst RATE      prints the tbf bucket 'up' gives RATE, in bytes
#
# Needs root and iproute2 (ip, tc), and nftables (nft) for --nat; exits 2 when one is
# missing or on bad arguments. Root of a user namespace will do: inside `unshare --user
# --map-root-user --net --mount` with a tmpfs mounted on /run, as
# tests/cli/swarm_netns_end_to_end.sh runs it without root.
# netem is not available on this machine class, so there is rate limiting but no delay/loss.
set -euo pipefail

readonly PREFIX=starling-ns
readonly HUB=starling-hub
readonly BRIDGE=starling-br0
readonly SUBNET=10.77.0
readonly MAX_NAMESPACES=250  # host part .1 .. .250 of the /24
# Home networks: router K is 10.77.0.(200+K) on the bridge and 192.168.(K+1).1 at home, so
# with routers the public namespaces stop below .200.
readonly ROUTER_PREFIX=starling-nat
readonly ROUTER_HOST_BASE=200
readonly MAX_ROUTERS=50
readonly MAX_NAMESPACES_WITH_NAT=$((ROUTER_HOST_BASE - 1))
readonly WAN=sl-wan  # a router's leg on the bridge, inside its namespace
readonly LAN=sl-lan  # a router's home bridge, inside its namespace

usage() {
  sed -n '8,25p' "$0" | sed 's/^# \{0,1\}//' >&2
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

home_subnet() { echo "192.168.$(($1 + 1))"; }

# One namespace: veth pair, namespace end addressed (and routed via GATEWAY when given), the
# other end on SWITCH, a bridge in namespace SWITCH_NS (the hub, or a home router).
add_namespace() {
  local i=$1 rate=$2 address=$3 gateway=$4 switch_ns=$5 switch=$6 ns="$PREFIX$1"
  ip netns add "$ns"
  ip link add "sl-veth$i" type veth peer name "sl-port$i"
  ip link set "sl-veth$i" netns "$ns"
  ip link set "sl-port$i" netns "$switch_ns"
  ip -n "$switch_ns" link set "sl-port$i" master "$switch" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$address/24" dev "sl-veth$i"
  ip -n "$ns" link set "sl-veth$i" up
  [ -n "$gateway" ] && ip -n "$ns" route add default via "$gateway"
  if [ -n "$rate" ]; then
    ip netns exec "$ns" tc qdisc add dev "sl-veth$i" root tbf rate "$rate" \
      burst "$(burst_bytes "$rate")" latency 50ms
  fi
}

# Router K: WAN on the hub's bridge, LAN a bridge of its own for its home namespaces. It
# forwards (its namespace's ip_forward only), masquerades what leaves by WAN, and drops
# connections opened from WAN, so a home namespace is unreachable even to a peer that adds
# a route to it.
add_router() {
  local k=$1 router="$ROUTER_PREFIX$1"
  ip netns add "$router"
  ip -n "$router" link set lo up
  ip -n "$router" link add "$WAN" type veth peer name "sl-nat$k" netns "$HUB"
  ip -n "$HUB" link set "sl-nat$k" master "$BRIDGE" up
  ip -n "$router" addr add "$SUBNET.$((ROUTER_HOST_BASE + k))/24" dev "$WAN"
  ip -n "$router" link set "$WAN" up
  ip -n "$router" link add "$LAN" type bridge
  ip -n "$router" addr add "$(home_subnet "$k").1/24" dev "$LAN"
  ip -n "$router" link set "$LAN" up
  # Written through /proc rather than sysctl(8): inside `ip netns exec` it is the router's own.
  ip netns exec "$router" sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'
  ip netns exec "$router" nft -f - <<EOF
table ip nat {
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "$WAN" masquerade
  }
}
table ip filter {
  chain forward {
    type filter hook forward priority filter; policy accept;
    iifname "$WAN" ct state != { established, related } drop
  }
}
EOF
}

# --nat K:I,J,... arguments into HOME_ROUTER[i]=K, checked against N.
declare -A HOME_ROUTER=()
declare -a ROUTERS=()
parse_nat() {
  local n=$1 spec=$2 k list i
  [[ "$spec" =~ ^([0-9]+):([0-9]+(,[0-9]+)*)$ ]] || die "--nat takes K:I,J,..., got '$spec'"
  k=$((10#${BASH_REMATCH[1]}))
  list=${BASH_REMATCH[2]}
  [ "$k" -lt "$MAX_ROUTERS" ] || die "--nat $spec: router K must be 0..$((MAX_ROUTERS - 1))"
  [[ " ${ROUTERS[*]} " == *" $k "* ]] && die "--nat $spec: router $k given twice"
  ROUTERS+=("$k")
  for i in ${list//,/ }; do
    i=$((10#$i))
    [ "$i" -lt "$n" ] || die "--nat $spec: namespace $i is not below N=$n"
    [ -z "${HOME_ROUTER[$i]:-}" ] || die "--nat $spec: namespace $i is already behind router ${HOME_ROUTER[$i]}"
    HOME_ROUTER[$i]=$k
  done
}

cmd_up() {
  local n=${1:-} rate="" i k
  require_count "$n"
  shift
  if [ "$#" -ge 1 ] && [ "$1" != --nat ]; then rate=$1; shift; fi
  while [ "$#" -ge 1 ]; do
    [ "$1" = --nat ] && [ "$#" -ge 2 ] || usage
    parse_nat "$n" "$2"
    shift 2
  done
  [ -n "$rate" ] && { command -v tc >/dev/null || die "'tc' not found; install iproute2"; burst_bytes "$rate" >/dev/null; }
  if [ "${#ROUTERS[@]}" -gt 0 ]; then
    command -v nft >/dev/null || die "'nft' not found; install nftables"
    [ "$n" -le "$MAX_NAMESPACES_WITH_NAT" ] ||
      die "with --nat, N must be 1..$MAX_NAMESPACES_WITH_NAT (routers take $SUBNET.$ROUTER_HOST_BASE and up), got '$n'"
  fi
  cmd_down "$MAX_NAMESPACES" >/dev/null  # start clean, whatever was left before
  ip netns add "$HUB"
  ip -n "$HUB" link add "$BRIDGE" type bridge
  ip -n "$HUB" link set "$BRIDGE" up
  for k in "${ROUTERS[@]}"; do add_router "$k"; done
  for ((i = 0; i < n; i++)); do
    k=${HOME_ROUTER[$i]:-}
    if [ -z "$k" ]; then
      add_namespace "$i" "$rate" "$SUBNET.$((i + 1))" "" "$HUB" "$BRIDGE"
    else
      add_namespace "$i" "$rate" "$(home_subnet "$k").$((i + 2))" "$(home_subnet "$k").1" "$ROUTER_PREFIX$k" "$LAN"
    fi
  done
  echo "up: $n namespaces ${PREFIX}0..$PREFIX$((n - 1)) on $SUBNET.0/24 via $BRIDGE${rate:+, rate $rate}"
  for k in "${ROUTERS[@]}"; do
    local homes=""
    for ((i = 0; i < n; i++)); do [ "${HOME_ROUTER[$i]:-}" = "$k" ] && homes+=" $PREFIX$i"; done
    echo "nat: $ROUTER_PREFIX$k at $SUBNET.$((ROUTER_HOST_BASE + k)) masquerades $(home_subnet "$k").0/24:$homes"
  done
}

# Deleting a namespace deletes the veth ends inside it, and with them their peers.
cmd_down() {
  local n=$1 i removed=0 router
  require_count "$n"
  for ((i = 0; i < n; i++)); do
    if [ -e "/run/netns/$PREFIX$i" ]; then
      ip netns del "$PREFIX$i" && removed=$((removed + 1))
    fi
  done
  for router in /run/netns/"$ROUTER_PREFIX"*; do
    [ -e "$router" ] && ip netns del "${router#/run/netns/}"
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

# Read from the namespace itself, so that the address rules live in 'up' alone.
cmd_addr() {
  local which=$1 ns dev address
  if [[ "$which" =~ ^[0-9]+$ ]]; then
    ns=$PREFIX$((10#$which)) dev=sl-veth$((10#$which))
  elif [[ "$which" =~ ^nat([0-9]+)$ ]]; then
    ns=$ROUTER_PREFIX$((10#${BASH_REMATCH[1]})) dev=$WAN
  else
    die "addr takes a namespace index I or a router natK, got '$which'"
  fi
  [ -e "/run/netns/$ns" ] || die "namespace $ns does not exist; run 'up' first"
  address=$(ip -n "$ns" -4 -o addr show dev "$dev" | awk '{ split($4, a, "/"); print a[1]; exit }')
  [ -n "$address" ] || die "$ns has no IPv4 address on $dev"
  echo "$address"
}

main() {
  [ "$#" -ge 2 ] || usage
  local command=$1
  shift
  [ "$command" = burst ] && { [ "$#" -eq 1 ] || usage; burst_bytes "$1"; exit 0; }
  require_tools
  case $command in
    up) cmd_up "$@" ;;
    down) [ "$#" -eq 1 ] || usage; cmd_down "$1" ;;
    exec) cmd_exec "$@" ;;
    addr) [ "$#" -eq 1 ] || usage; cmd_addr "$1" ;;
    *) usage ;;
  esac
}

main "$@"

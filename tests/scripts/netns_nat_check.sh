#!/usr/bin/env bash
# scripts/netns.sh's home networks, with real TCP inside its namespaces only: 8 namespaces,
# 0..4 public, 5 and 6 behind router 0, 7 behind router 1. A home namespace dials a public
# one and is seen as its router's public address; a public namespace cannot dial a home
# one, not even with a route to it through the router; one home network cannot dial the
# other; 'down' leaves no namespace. Root only: skips (exit 0) without root, ip, nft or
# python3, or while other starling namespaces exist. Not in ctest (CI is not root); run it
# by hand: sudo tests/scripts/netns_nat_check.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NETNS=$ROOT/scripts/netns.sh
PORT=47650

skip() { echo "SKIP: $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
for tool in ip nft python3 timeout; do
  command -v "$tool" >/dev/null || skip "'$tool' not found"
done
if ip netns list | grep -q '^starling-'; then
  skip "starling namespaces exist already (another run?); 'scripts/netns.sh down 250' removes them"
fi

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# Answers each connection with the source address it saw, until killed or 120 s pass.
SERVER='
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
open(sys.argv[3], "w").close()
s.settimeout(120)
while True:
    c, peer = s.accept()
    c.sendall((peer[0] + "\n").encode())
    c.close()
'
# Prints the source address the server saw, or the reason the connection failed (exit 1).
CLIENT='
import socket, sys
try:
    c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
    c.settimeout(3)
    print(c.recv(64).decode().strip())
except OSError as e:
    print("refused: " + (type(e).__name__ if e.errno is None else __import__("errno").errorcode[e.errno]))
    sys.exit(1)
'

tmp=$(mktemp -d)
servers=()
cleanup() {
  local pid
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  timeout 60 "$NETNS" down 8 >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# serve NS ADDRESS: a server in namespace starling-nsNS, waited for at most 10 s.
serve() {
  local ready=$tmp/ready$1 tries
  ip netns exec "starling-ns$1" timeout 120 python3 -c "$SERVER" "$2" "$PORT" "$ready" &
  servers+=("$!")
  for ((tries = 0; tries < 100; tries++)); do
    [ -e "$ready" ] && return 0
    sleep 0.1
  done
  echo "FAIL: no server in starling-ns$1 after 10 s"
  exit 1
}

# dial NS ADDRESS: what starling-nsNS gets from the server at ADDRESS (10 s at most).
dial() {
  ip netns exec "starling-ns$1" timeout 10 python3 -c "$CLIENT" "$2" "$PORT" || true
}

expect_seen() {  # NS ADDRESS SOURCE
  local got
  got=$(dial "$1" "$2")
  [ "$got" = "$3" ] && pass "starling-ns$1 -> $2 seen as $3" || fail "starling-ns$1 -> $2: expected to be seen as $3, got '$got'"
}

expect_blocked() {  # NS ADDRESS
  local got
  got=$(dial "$1" "$2")
  [[ "$got" == refused:* ]] && pass "starling-ns$1 -> $2 blocked ($got)" || fail "starling-ns$1 -> $2: expected no connection, got '$got'"
}

expect_exit2() {  # WHAT ARGS...
  local what=$1 rc=0
  shift
  timeout 30 "$NETNS" "$@" >/dev/null 2>&1 || rc=$?
  [ "$rc" -eq 2 ] && pass "$what exits 2" || fail "$what: expected exit 2, got $rc"
}

forward_before=$(cat /proc/sys/net/ipv4/ip_forward)

expect_exit2 "a home namespace not below N" up 8 --nat 0:8
expect_exit2 "a router above 49" up 8 --nat 50:1
expect_exit2 "a router given twice" up 8 --nat 0:1 --nat 0:2
expect_exit2 "a namespace behind two routers" up 8 --nat 0:1 --nat 1:1
expect_exit2 "N above 199 with --nat" up 200 --nat 0:1
expect_exit2 "a malformed --nat" up 8 --nat 0:

timeout 120 "$NETNS" up 8 1gbit --nat 0:5,6 --nat 1:7

for pair in 0=10.77.0.1 4=10.77.0.5 5=192.168.1.7 6=192.168.1.8 7=192.168.2.9 nat0=10.77.0.200 nat1=10.77.0.201; do
  got=$("$NETNS" addr "${pair%%=*}")
  [ "$got" = "${pair#*=}" ] && pass "addr ${pair%%=*} is $got" || fail "addr ${pair%%=*}: expected ${pair#*=}, got '$got'"
done

serve 0 10.77.0.1
serve 5 192.168.1.7

expect_seen 1 10.77.0.1 10.77.0.2       # public to public: no NAT
expect_seen 5 10.77.0.1 10.77.0.200     # home network 0 out: masqueraded as router 0
expect_seen 6 10.77.0.1 10.77.0.200
expect_seen 7 10.77.0.1 10.77.0.201     # home network 1 out: masqueraded as router 1
expect_seen 6 192.168.1.7 192.168.1.8   # within a home network: direct, and the server is up
expect_blocked 0 192.168.1.7            # public: no route to a home network
expect_blocked 7 192.168.1.7            # the other home network: its router has no route
ip -n starling-ns1 route add 192.168.1.0/24 via 10.77.0.200
expect_blocked 1 192.168.1.7            # a route through the router: it drops connections from outside

[ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$forward_before" ] &&
  pass "the host's ip_forward is untouched ($forward_before)" || fail "the host's ip_forward changed"

for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
servers=()
timeout 60 "$NETNS" down 8 >/dev/null
left=$(ip netns list | grep '^starling-' || true)
[ -z "$left" ] && pass "down leaves no starling namespace" || fail "down left: $left"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"

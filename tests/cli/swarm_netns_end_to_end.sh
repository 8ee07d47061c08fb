#!/usr/bin/env bash
# Issue #50's NAT, churn and lying-seeder scenarios at once, shortened, across network
# namespaces (scripts/netns.sh) that this test makes in namespaces of its own and that go
# with it: nothing is sent outside them, and the host's namespaces are not touched.
#   p0 ns0 reachable, starts the job        p1 ns1 reachable
#   p2 ns2 reachable, --fault lying-seeder  (a seeder that flips one bit in what it serves)
#   p3 ns3 behind NAT router 0              p4 ns4 behind NAT router 1 (3 -> 4 needs a relay)
# Then, at rounds 25 and 55 of the job's 117 (5 epochs of 469 steps over a quarter of the
# data, H = 20), a random live peer other than p2 is killed with -9, and a newcomer joins
# through a random live reachable peer: p5 in ns5 behind router 0, then p6 in ns6, reachable,
# whose hellos reach the members behind NAT through a relay until they dial it.
# Each peer starts with the job config, an invitation and one bootstrap address. The MLP
# 784-1024-1024-10 runs local SGD; bench/swarm/churn_check.py judges the logs: the job
# finished, every synchronous round's digests agree, joiners trained within one round of
# their download, a joiner caught the lying seeder and took the agreed state from the
# others, and the peers behind NAT used a relay (and only they did).
# Runs as root in namespaces of its own (unshare --net --mount), and without root in a user
# namespace (unshare --user --map-root-user --net --mount); exits 77 (ctest: skipped) with the
# reason when it is not root and cannot make a user namespace, or is root in a chroot.
#   swarm_netns_end_to_end.sh STARLING
# SWARM_NETNS_SEED: the seed of the random choices (default: a new one each run, printed, and
# named by a failure); SWARM_NETNS_KEEP=DIR: copy the logs, configs and summaries there.
set -euo pipefail
readonly SKIP=77
starling=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ -z "${SWARM_NETNS_INSIDE:-}" ]; then
  for tool in ip nft unshare python3; do
    command -v "$tool" >/dev/null || { echo "FAIL: '$tool' not found (scripts/deps.sh installs it)" >&2; exit 1; }
  done
  wrap=(unshare --net --mount)
  [ "$(id -u)" -ne 0 ] || unshare --net --mount true 2>/dev/null || {
    # A chroot (the fresh-machine check): "/" is no mount point, so neither this test nor
    # `ip netns exec` can make a mount namespace of its own.
    echo "SKIP: as root in a chroot: no mount namespace can be made private (\"/\" is no mount point)" >&2
    exit "$SKIP"
  }
  [ "$(id -u)" -eq 0 ] || wrap=(unshare --user --map-root-user --net --mount)
  # What the test needs of its namespaces: its own /run/netns, a namespace, an nftables NAT rule.
  probe='mount -t tmpfs none /run && ip netns add probe &&
    ip netns exec probe nft add table ip nat &&
    ip netns exec probe nft "add chain ip nat post { type nat hook postrouting priority srcnat; }" &&
    ip netns exec probe nft add rule ip nat post masquerade'
  if ! why=$("${wrap[@]}" sh -c "$probe" 2>&1); then
    [ "$(id -u)" -ne 0 ] || { echo "FAIL: cannot make network namespaces with NAT as root: $why" >&2; exit 1; }
    echo "SKIP: cannot make network namespaces with NAT as $(id -un) (${wrap[*]}): ${why:-no reason given}" >&2
    echo "SKIP: run as root, or allow unprivileged user namespaces" \
      "(sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)" >&2
    exit "$SKIP"
  fi
  export SWARM_NETNS_INSIDE=1
  exec "${wrap[@]}" sh -c 'mount -t tmpfs none /run && exec bash "$0" "$@"' "$0" "$starling"
fi

# Inside namespaces of its own: the test itself.
seed=${SWARM_NETNS_SEED:-$RANDOM} kill_rounds=(25 55) initial=5 port=5600
kills=${#kill_rounds[@]}
netns=$root/scripts/netns.sh
tmp=$(mktemp -d)
names=() pids=() alive=() codes=()  # one entry per peer started: p0, p1, ...
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$netns" down 7 >/dev/null 2>&1 || true
  if [ -n "${SWARM_NETNS_KEEP:-}" ]; then
    rm -rf "$tmp/cache"
    mkdir -p "$SWARM_NETNS_KEEP" && cp -r "$tmp/." "$SWARM_NETNS_KEEP/"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  for f in "$tmp"/p*.log; do echo "== $f"; grep -v "ETA\|info epoch\|state digest" "$f" | tail -12; done >&2
  echo "FAIL: $* (SWARM_NETNS_SEED=$seed)" >&2
  exit 1
}
RANDOM=$seed
echo "swarm_netns: seed $seed (SWARM_NETNS_SEED)" >&2
behind_nat=" p3 p4 p5 "
"$netns" up 7 --nat 0:3,5 --nat 1:4 >/dev/null

"$starling" invite --new-owner-key -o "$tmp/owner.key" >"$tmp/owner.toml" 2>/dev/null
source "$here/swarm_job.sh"
swarm_job "$tmp/job.toml" "$tmp/owner.toml" run.name='"churn"' run.epochs=5 model.hidden="[1024, 1024]" \
  run.out_dir="\"$tmp/out\"" run.data_dir="\"$tmp/cache\"" exchange.mode='"local-sgd"' exchange.period=20 \
  exchange.start_timeout_seconds=30 swarm.start_peers=$initial swarm.join_timeout_seconds=30
"$starling" invite --key "$tmp/owner.key" --job "$tmp/job.toml" --expires 1 -o "$tmp/invite.txt" 2>/dev/null

# start_peer [BOOTSTRAP-NAME] [ARGS...]: the next peer pK in namespace K, its log pK.log.
start_peer() {
  local k=${#names[@]} via=${1:-}
  shift || true
  local args=(--listen "$("$netns" addr "$k"):$port" "$@")
  [ -z "$via" ] || args+=(--bootstrap "$("$netns" addr "${via#p}"):$port" --invitation "$tmp/invite.txt")
  [[ "$behind_nat" != *" p$k "* ]] || args+=(--behind-nat)
  # ip netns exec execs the peer: $! is the peer itself, which kill -9 reaches.
  ip netns exec "starling-ns$k" "$starling" peer --config "$tmp/job.toml" "${args[@]}" >"$tmp/p$k.log" 2>&1 &
  names+=("p$k") pids+=($!) alive+=(1)
  echo "$(date +%s.%N) start p$k bootstrap ${via:-none}" >>"$tmp/events.log"
}
reap() {  # reap K: waits for peer K's exit and notes its status
  local code=0
  wait "${pids[$1]}" 2>/dev/null || code=$?
  alive[$1]=0 codes[$1]=$code
}
refresh() {  # notes the peers that exited on their own
  local i
  for i in "${!pids[@]}"; do
    if [ "${alive[$i]}" = 1 ] && ! kill -0 "${pids[$i]}" 2>/dev/null; then
      reap "$i"
      echo "$(date +%s.%N) exited ${names[$i]}" >>"$tmp/events.log"
    fi
  done
}
live_except() {  # live_except NAME...: the live peers' indices, those named left out
  local i
  for i in "${!pids[@]}"; do
    [ "${alive[$i]}" = 1 ] && [[ " $* " != *" ${names[$i]} "* ]] && echo "$i"
  done
  return 0
}

# await K TEXT SECONDS: until pK's log holds TEXT; fails when pK exits or the time is up.
await() {
  local k=$1 text=$2 t
  for ((t = 0; t < $3 * 10; t++)); do
    grep -q "$text" "$tmp/p$k.log" 2>/dev/null && return 0
    refresh
    [ "${alive[$k]}" = 1 ] || fail "p$k exited before its log said '$text'"
    sleep 0.1
  done
  fail "p$k's log did not say '$text' within $3 s"
}
# await_round K R: until pK trained round R (at most 120 s).
await_round() {
  local t last
  for ((t = 0; t < 1200; t++)); do
    last=$(sed -n 's/.*state digest after round \([0-9]*\):.*/\1/p' "$tmp/p$1.log" | tail -1)
    [ "${last:-0}" -ge "$2" ] && return 0
    refresh
    [ "${alive[$1]}" = 1 ] || fail "p$1 exited before round $2"
    sleep 0.1
  done
  fail "p$1 did not reach round $2 within 120 s"
}
# One newcomer at a time, each once the one before took up its view: ids follow the start
# order, and no two newcomers enter the same view.
: >"$tmp/events.log"
start_peer
for k in 1 2 3 4; do
  if [ "$k" -eq 2 ]; then start_peer p0 --fault lying-seeder; else start_peer p0; fi
  await "$k" "peers: joined view" 30
done
await 0 "state digest after round" 60
started=$(date +%s)

# Churn at given rounds of the job, not times, so that it ends mid-job on any host; the lying
# seeder is spared, so that every newcomer may meet it.
for r in "${kill_rounds[@]}"; do
  await_round 2 "$r"
  mapfile -t candidates < <(live_except p2)
  [ ${#candidates[@]} -gt 0 ] || fail "no live peer left to kill"
  victim=${candidates[$((RANDOM % ${#candidates[@]}))]}
  kill -9 "${pids[$victim]}" 2>/dev/null || true
  reap "$victim"
  echo "$(date +%s.%N) kill ${names[$victim]}" >>"$tmp/events.log"
  mapfile -t via < <(live_except $behind_nat)
  [ ${#via[@]} -gt 0 ] || fail "no live reachable peer to join through"
  via=${names[${via[$((RANDOM % ${#via[@]}))]}]}
  start_peer "$via"
  await "$((${#names[@]} - 1))" "peers: joined view" 30
  echo "churn: round $r, $(($(date +%s) - started)) s: killed ${names[$victim]}, ${names[-1]} joins through $via" >&2
done
echo "$(date +%s.%N) churn_end" >>"$tmp/events.log"

# The survivors finish the job (at most 120 s).
for _ in $(seq 120); do
  refresh
  [ -n "$(live_except)" ] || break
  sleep 1
done
refresh
for i in $(live_except); do
  kill -9 "${pids[$i]}" 2>/dev/null || true
  echo "$(date +%s.%N) hung ${names[$i]}" >>"$tmp/events.log"
done
for i in "${!pids[@]}"; do
  [ -n "${codes[$i]:-}" ] || reap "$i"
  echo "${names[$i]} ${codes[$i]}" >>"$tmp/exits.txt"
done
nat=$(echo $behind_nat | tr ' ' ,)
python3 "$root/bench/swarm/churn_check.py" "$tmp" --kills "$kills" --joins "$kills" --initial "$initial" \
  --liar p2 --behind-nat "$nat" || fail "churn_check.py found the run wrong"
echo "ok: NAT, churn and a lying seeder across namespaces"

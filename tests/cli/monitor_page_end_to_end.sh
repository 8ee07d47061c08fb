#!/usr/bin/env bash
# The live page in headless Chromium during a 4-peer gossip job on loopback (a small MLP on
# Fashion-MNIST): 4 peer rows (on a peer's page and on `starling monitor`'s), loss curves with
# more points at a second read, and a peer killed with kill -9 shown as dead within 10 s.
# Saves a screenshot into OUT.
#   monitor_page_end_to_end.sh STARLING SOURCE_DIR OUT
set -euo pipefail
starling=$1 src=$2 out=$3
base=$((10000 + ($$ % 20000)))
mport=$((base + 100))
source "$(dirname "$0")/peers_config.sh"
mkdir -p "$out"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
url=http://127.0.0.1:$mport/

# Chromium's DOM of the page after a few of its polls (virtual time waits for the fetches).
# --user-data-dir: a profile of its own, so no other Chromium's lock can stall it.
dom() {
  timeout 30 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chromium" --virtual-time-budget=2500 \
    --dump-dom "${1:-$url}" 2>>"$tmp/chromium.log"
}

bash "$src/tests/cli/n_peers_config.sh" "$src/configs/fmnist-mlp-4peers-gossip.toml" 4 $base >"$tmp/job.toml"
for i in 0 1 2 3; do  # more epochs than the test lasts: it ends the peers itself
  "$starling" peer --config "$tmp/job.toml" --id $i --metrics-port $mport --set run.epochs=500 --set 'model.hidden=[32]' \
    --set run.eval_every=0.5 --set exchange.timeout_seconds=20 --set run.out_dir="$tmp/out" >"$tmp/peer$i.log" 2>&1 &
  pids+=($!)
done
for i in 0 1 2 3; do
  for _ in $(seq 200); do curl -sf http://127.0.0.1:$((mport + i))/state.json | grep -q '"step":[1-9]' && break; sleep 0.1; done
  curl -sf http://127.0.0.1:$((mport + i))/state.json | grep -q '"step":[1-9]' || { cat "$tmp/peer$i.log"; fail "peer $i trains no step within 20 s"; }
done

first=$(dom)
rows=$(grep -o 'class="peer-row"' <<<"$first" | wc -l)
[ "$rows" -eq 4 ] || { echo "$first" | head -c 3000; fail "the page shows $rows peer rows, not 4"; }
"$starling" monitor --peer 127.0.0.1:$mport --port $((mport + 10)) --seconds 30 >"$tmp/monitor.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do curl -sf http://127.0.0.1:$((mport + 10))/seed.json >/dev/null && break; sleep 0.1; done
apart=$(dom http://127.0.0.1:$((mport + 10))/)
rows=$(grep -o 'class="peer-row"' <<<"$apart" | wc -l)
[ "$rows" -eq 4 ] || { cat "$tmp/monitor.log"; fail "starling monitor's page shows $rows peer rows, not 4"; }
points() { grep -o "<polyline[^>]*data-peer-id=\"$2\" data-points=\"[0-9]*\"" <<<"$1" | grep -o 'points="[0-9]*"' | tr -dc 0-9; }
grown() {  # every peer training, with more loss points than at the first read
  for i in 0 1 2 3; do
    grep -q "<tr class=\"peer-row\" data-peer-id=\"$i\" data-state=\"training\"" <<<"$second" || return 1
    a=$(points "$first" $i) b=$(points "$second" $i)
    [ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] || return 1
  done
}
for _ in 1 2 3 4 5; do  # a slow host may need a further read for every peer's next snapshot
  second=$(dom)
  grown && break
done
grown || { echo "$second" | head -c 3000; fail "peer $i is not training with more loss points (${a:-no}, then ${b:-no})"; }

kill -9 "${pids[3]}"
killed=$(date +%s.%N)
for _ in $(seq 10); do
  now=$(dom)
  grep -q '<tr class="peer-row" data-peer-id="3" data-state="dead"' <<<"$now" && break
done
seen=$(date +%s.%N)
grep -q '<tr class="peer-row" data-peer-id="3" data-state="dead"' <<<"$now" || fail "the killed peer is not shown dead"
awk -v a="$killed" -v b="$seen" 'BEGIN { exit !(b - a <= 10) }' || fail "the killed peer was shown dead only after $(awk -v a="$killed" -v b="$seen" 'BEGIN { print b - a }') s"
timeout 30 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chromium" --virtual-time-budget=2500 \
  --window-size=1400,1000 --screenshot="$out/monitor.png" "$url" 2>>"$tmp/chromium.log" >/dev/null
[ -s "$out/monitor.png" ] || fail "no screenshot"
cp "$out/monitor.png" /tmp/monitor-screenshot.png 2>/dev/null || true
echo "PASS: 4 peer rows, growing curves, the killed peer dead after $(awk -v a="$killed" -v b="$seen" 'BEGIN { printf "%.1f", b - a }') s; screenshot $out/monitor.png"

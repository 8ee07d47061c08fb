#!/usr/bin/env bash
# The monitor's cost to training: samples/s and CPU time per sample, with the monitor off and
# on (each peer scraped like Prometheus and polled like the live page, once a second each),
# interleaved off/on PAIRS times; prints each pair and the on/off ratios of the sums.
#   bench/monitor/monitor_cost.sh STARLING [PAIRS=3] [EPOCHS=2] [train|launch]
# train: one node on configs/fmnist-mlp.toml; launch: the 4 gossip peers of
# configs/fmnist-mlp-4peers-gossip.toml as processes (samples/s summed over the peers).
set -euo pipefail
starling=$1 pairs=${2:-3} epochs=${3:-2} kind=${4:-train}
configs=$(cd "$(dirname "$0")/../../configs" && pwd)
port=$((20000 + ($$ % 10000)))
tmp=$(mktemp -d)
poller=
trap '[ -z "$poller" ] || kill $poller 2>/dev/null; rm -rf "$tmp"' EXIT
if [ "$kind" = train ]; then
  command=(train --config "$configs/fmnist-mlp.toml") peers=1
else
  command=(launch --config "$configs/fmnist-mlp-4peers-gossip.toml") peers=4
fi

# One run; writes its samples/s (summed over peers) and its CPU seconds (user + system) to
# $tmp/MODE.result.
run() {
  local mode=$1 n=$2 extra=()
  if [ "$mode" = on ]; then
    extra=(--set monitor.metrics_port=$port)
    # One client process, as Prometheus and a browser are: a process per request would time
    # its own start-up on these cores.
    /usr/bin/python3 -c '
import sys, time, urllib.request
port, peers = int(sys.argv[1]), int(sys.argv[2])
while True:
    time.sleep(1)
    for i in range(peers):
        for path in ("/metrics", "/state.json"):
            try:
                urllib.request.urlopen("http://127.0.0.1:%d%s" % (port + i, path), timeout=2).read()
            except OSError:
                pass  # not up yet, or gone
' $port $peers &
    poller=$!
  fi
  /usr/bin/time -f '%U %S' -o "$tmp/$mode$n.time" "$starling" "${command[@]}" --set run.epochs="$epochs" \
    --set run.out_dir="$tmp/$mode$n" --set run.name=run "${extra[@]}" >"$tmp/$mode$n.log" 2>&1 \
    || { cat "$tmp/$mode$n.log" >&2; exit 1; }
  if [ -n "$poller" ]; then
    kill $poller 2>/dev/null || true
    wait $poller 2>/dev/null || true
    poller=
  fi
  /usr/bin/python3 - "$tmp/$mode$n" "$tmp/$mode$n.time" >"$tmp/$mode.result" <<'PY'
import glob, json, sys
rate = sum(json.load(open(f))["samples_per_second"] for f in glob.glob(sys.argv[1] + "/*.summary.json"))
user, system = map(float, open(sys.argv[2]).read().split()[-2:])
print(rate, user + system)
PY
}

echo "pair  off samples/s  on samples/s  on/off   off cpu s  on cpu s  on/off"
sums=(0 0 0 0)
for i in $(seq "$pairs"); do
  run off "$i"
  run on "$i"
  read -r off off_cpu <"$tmp/off.result"
  read -r on on_cpu <"$tmp/on.result"
  printf '%4d  %12.0f  %12.0f  %6.3f  %10.2f  %8.2f  %6.3f\n' "$i" "$off" "$on" "$(echo "$on / $off" | bc -l)" \
    "$off_cpu" "$on_cpu" "$(echo "$on_cpu / $off_cpu" | bc -l)"
  sums=("$(echo "${sums[0]} + $off" | bc -l)" "$(echo "${sums[1]} + $on" | bc -l)"
        "$(echo "${sums[2]} + $off_cpu" | bc -l)" "$(echo "${sums[3]} + $on_cpu" | bc -l)")
done
printf ' sum  %12.0f  %12.0f  %6.3f  %10.2f  %8.2f  %6.3f\n' "${sums[0]}" "${sums[1]}" "$(echo "${sums[1]} / ${sums[0]}" | bc -l)" \
  "${sums[2]}" "${sums[3]}" "$(echo "${sums[3]} / ${sums[2]}" | bc -l)"

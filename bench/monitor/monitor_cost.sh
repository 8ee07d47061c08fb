#!/usr/bin/env bash
# The monitor's cost to a training node: samples/s of `starling train` with the monitor off
# and on (scraped like Prometheus and polled like the live page, once a second each),
# interleaved off/on PAIRS times; prints each pair and the on/off ratio of the means.
#   bench/monitor/monitor_cost.sh STARLING [PAIRS=3] [EPOCHS=2] [CONFIG=configs/fmnist-mlp.toml]
set -euo pipefail
starling=$1 pairs=${2:-3} epochs=${3:-2}
config=${4:-$(dirname "$0")/../../configs/fmnist-mlp.toml}
port=$((20000 + ($$ % 10000)))
tmp=$(mktemp -d)
poller=
trap '[ -z "$poller" ] || kill $poller 2>/dev/null; rm -rf "$tmp"' EXIT

# One run; prints its samples/s. With "on", a poller reads /metrics and /state.json every second.
run() {
  local mode=$1 n=$2 extra=()
  [ "$mode" = on ] && extra=(--metrics-port $port)
  if [ "$mode" = on ]; then
    (while sleep 1; do curl -s -o /dev/null http://127.0.0.1:$port/metrics; curl -s -o /dev/null http://127.0.0.1:$port/state.json; done) &
    poller=$!
  fi
  "$starling" train --config "$config" --set run.epochs="$epochs" --set run.out_dir="$tmp" --set run.name="$mode$n" \
    "${extra[@]}" >"$tmp/$mode$n.log" 2>&1 || { cat "$tmp/$mode$n.log" >&2; exit 1; }
  if [ -n "$poller" ]; then kill $poller 2>/dev/null; wait $poller 2>/dev/null || true; poller=; fi
  /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["samples_per_second"])' "$tmp/$mode$n.summary.json"
}

echo "pair  off samples/s  on samples/s  on/off"
off_sum=0 on_sum=0
for i in $(seq "$pairs"); do
  off=$(run off "$i")
  on=$(run on "$i")
  printf '%4d  %12.0f  %12.0f  %6.3f\n' "$i" "$off" "$on" "$(echo "$on / $off" | bc -l)"
  off_sum=$(echo "$off_sum + $off" | bc -l) on_sum=$(echo "$on_sum + $on" | bc -l)
done
printf 'mean  %12.0f  %12.0f  %6.3f\n' "$(echo "$off_sum / $pairs" | bc -l)" "$(echo "$on_sum / $pairs" | bc -l)" \
  "$(echo "$on_sum / $off_sum" | bc -l)"

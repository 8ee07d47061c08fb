#!/usr/bin/env bash
# `make soak`: 8 gossip peers on Fashion-MNIST for SOAK_SECONDS (default 1200, 20 minutes),
# the resident memory of every peer sampled from /proc every SOAK_EVERY seconds (default 10).
# Passes when no peer was lost (none exited, none was ever declared dead or left a view) and
# every peer's resident memory stayed within 10 % of what it was once warm (at a quarter of
# the run). The peers train far more epochs than fit the time and are stopped at the end.
# Writes results/soak/{rss.csv,launch.log,report.txt}. Not part of the test suite.
# Usage: scripts/soak.sh [BUILD_DIR]; the peers listen on SOAK_PORT (default 5700) and up.
set -euo pipefail
build=${1:-build}
seconds=${SOAK_SECONDS:-1200}
every=${SOAK_EVERY:-10}
port=${SOAK_PORT:-5700}
out=results/soak
rm -rf "$out" && mkdir -p "$out"
config=$out/soak.toml
cat >"$config" <<TOML
[run]
name = "soak"
epochs = 100000
eval_every = 1.0
out_dir = "out"
[model]
hidden = [256, 128]
[optimizer]
lr = 0.05
batch = 32
schedule = "constant"
[node]
threads = 1
[exchange]
mode = "gossip"
topology = "ring"
timeout_seconds = 120
TOML
for i in $(seq 0 7); do printf '[[peer]]\nid = %d\nendpoint = "tcp://127.0.0.1:%d"\n' "$i" $((port + i)) >>"$config"; done

"$build/cli/starling" launch --config "$config" --set run.out_dir="$PWD/$out/out" >"$out/launch.log" 2>&1 &
launcher=$!
trap 'kill -INT "$launcher" 2>/dev/null || true' EXIT
sleep 5
peers=($(pgrep -P "$launcher"))
[ ${#peers[@]} -eq 8 ] || { echo "expected 8 peers, found ${#peers[@]}" >&2; exit 1; }
echo "seconds,$(printf 'peer%d_rss_kb,' $(seq 0 7) | sed 's/,$//')" >"$out/rss.csv"
start=$(date +%s)
while [ $(($(date +%s) - start)) -lt "$seconds" ]; do
  row=$(($(date +%s) - start))
  for pid in "${peers[@]}"; do
    rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
    row+=",${rss:-0}"
  done
  echo "$row" >>"$out/rss.csv"
  sleep "$every"
done

# Verdict: every peer alive to the end, no death or view change logged, memory flat.
lost=0
for pid in "${peers[@]}"; do kill -0 "$pid" 2>/dev/null || lost=$((lost + 1)); done
deaths=$(grep -c "is dead\|view .* -> " "$out/launch.log" || true)
report=$(awk -F, -v quarter=$((seconds / 4)) '
  NR == 1 { next }
  { n = NF - 1
    if (!warm && $1 >= quarter) { warm = 1; for (i = 2; i <= NF; ++i) base[i] = $i }
    if (warm) for (i = 2; i <= NF; ++i) { if ($i > high[i]) high[i] = $i; if (!low[i] || $i < low[i]) low[i] = $i } }
  END {
    worst = 0
    for (i = 2; i <= n + 1; ++i) {
      up = (high[i] - base[i]) / base[i]; down = (base[i] - low[i]) / base[i]
      d = up > down ? up : down; if (d > worst) worst = d
      printf "peer %d: %d kB once warm, %d..%d kB after\n", i - 2, base[i], low[i], high[i]
    }
    printf "largest change once warm: %.1f %%\n", 100 * worst
    exit worst > 0.10 }' "$out/rss.csv") && flat=yes || flat=no
epochs=$(grep -c "info epoch" "$out/launch.log" || true)
{
  echo "soak: 8 gossip peers for $seconds s, $epochs evaluations in all"
  echo "$report"
  echo "peers lost: $lost; deaths or view changes logged: $deaths; memory flat within 10 %: $flat"
} | tee "$out/report.txt"
kill -INT "$launcher" 2>/dev/null || true
wait "$launcher" 2>/dev/null || true
trap - EXIT
[ "$lost" -eq 0 ] && [ "$deaths" -eq 0 ] && [ "$flat" = yes ]

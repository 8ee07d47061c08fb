#!/usr/bin/env bash
# /metrics of every peer of a 4-peer gossip job on loopback (a small MLP on Fashion-MNIST),
# parsed by prometheus_client: scraped once while the peers train and once after (each
# lingers), the counters only grow, and the bytes they count are the summary's.
set -euo pipefail
starling=$1 src=$2
base=$((10000 + ($$ % 20000)))
mport=$((base + 100))
source "$(dirname "$0")/peers_config.sh"
scrape=(/usr/bin/python3 "$(dirname "$0")/monitor_scrape.py")

bash "$src/tests/cli/n_peers_config.sh" "$src/configs/fmnist-mlp-4peers-gossip.toml" 4 $base >"$tmp/job.toml"
timeout 60 "$starling" launch --config "$tmp/job.toml" --set run.epochs=6 --set run.eval_every=1 --set 'model.hidden=[32]' \
  --set run.out_dir="$tmp/out" --set monitor.metrics_port=$mport --set monitor.linger_seconds=15 \
  --summary "$tmp/job.json" >"$tmp/job.log" 2>&1 &
launcher=$!
trap 'kill $launcher 2>/dev/null || true; rm -rf "$tmp"' EXIT
for i in 0 1 2 3; do
  "${scrape[@]}" wait http://127.0.0.1:$((mport + i)) 30 "$tmp/first$i.json" || { cat "$tmp/job.log"; fail "peer $i's /metrics"; }
done
for i in 0 1 2 3; do  # the summaries are written before the peers linger
  for _ in $(seq 300); do [ -s "$tmp/out/fmnist-mlp-4peers-gossip-peer$i.summary.json" ] && break; sleep 0.1; done
  summary=$tmp/out/fmnist-mlp-4peers-gossip-peer$i.summary.json
  [ -s "$summary" ] || { cat "$tmp/job.log"; fail "peer $i wrote no summary within 30 s"; }
  "${scrape[@]}" scrape http://127.0.0.1:$((mport + i)) "$tmp/last$i.json" || fail "peer $i's last /metrics"
  "${scrape[@]}" grew "$tmp/first$i.json" "$tmp/last$i.json" || fail "peer $i's counters"
  "${scrape[@]}" sent "$summary" "$tmp/last$i.json" || fail "peer $i's byte counters"
done
grep -q 'starling_validation_accuracy' <(curl -s http://127.0.0.1:$mport/metrics) || fail "no validation accuracy"
wait $launcher || { cat "$tmp/job.log"; fail "the job failed"; }
echo "PASS: 4 peers' /metrics parse, grow while they train, and count the bytes their summaries say"

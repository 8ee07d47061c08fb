#!/usr/bin/env bash
# `starling launch` and `starling peer` as real processes on loopback, on synthetic data:
# all-reduce ends with identical models on every peer, gossip trains, a peer that cannot
# start makes the launcher stop the others and fail, and bad peer configs exit 2.
set -euo pipefail
starling=$1
base=$((10000 + ($$ % 20000)))  # below the ephemeral range (32768+) that other suites bind

source "$(dirname "$0")/peers_config.sh"

peers_config "$tmp/ar.toml" allreduce $base $((base + 1)) $((base + 2))
timeout 120 "$starling" launch --config "$tmp/ar.toml" --summary "$tmp/ar.json" >"$tmp/ar.log" 2>&1 \
  || { cat "$tmp/ar.log"; fail "allreduce launch failed"; }
grep -q '"identical_models": true' "$tmp/ar.json" || { cat "$tmp/ar.json"; fail "allreduce peers ended with different models"; }
grep -q '"peers": 3' "$tmp/ar.json" || fail "summary does not count 3 peers"
grep -q '^\[peer 2\]' "$tmp/ar.log" || fail "peer output is not prefixed"
sent=$(grep '"bytes_sent"' "$tmp/ar.json" | tr -dc '0-9.')
[ "${sent%.*}" -gt 100000 ] || fail "allreduce sent only $sent bytes"
# One state (docs/failures.md): every peer's digests of the last rounds are the same.
digests() { sed -n '/"state_hash"/,/}/p' "$tmp/out/e2e-peer$1.summary.json"; }
[ "$(digests 0 | wc -l)" -gt 10 ] || fail "peer 0's summary has no state digests"
for p in 1 2; do [ "$(digests $p)" = "$(digests 0)" ] || fail "peer $p's state digests differ from peer 0's"; done
grep -q '"disagreements": 0' "$tmp/out/e2e-peer0.summary.json" || fail "the state check found disagreements"

peers_config "$tmp/gossip.toml" gossip $((base + 3)) $((base + 4)) $((base + 5))
timeout 120 "$starling" launch --config "$tmp/gossip.toml" --summary "$tmp/g.json" >"$tmp/g.log" 2>&1 \
  || { cat "$tmp/g.log"; fail "gossip launch failed"; }
acc=$(grep '"test_accuracy_min"' "$tmp/g.json" | tr -dc '0-9.')
awk -v a="$acc" 'BEGIN { exit !(a > 0.8) }' || fail "gossip peers reached only $acc"

# Compressed gossip (CHOCO-SGD with top-k) and asynchronous gossip also train every peer.
peers_config "$tmp/choco.toml" gossip $((base + 11)) $((base + 12)) $((base + 13))
printf '[compression]\ncodec = "topk"\ndensity = 0.1\n' >>"$tmp/choco.toml"
peers_config "$tmp/async.toml" async-gossip $((base + 14)) $((base + 15)) $((base + 16))
for variant in choco async; do
  timeout 120 "$starling" launch --config "$tmp/$variant.toml" --summary "$tmp/$variant.json" >"$tmp/$variant.log" 2>&1 \
    || { cat "$tmp/$variant.log"; fail "$variant launch failed"; }
  acc=$(grep '"test_accuracy_min"' "$tmp/$variant.json" | tr -dc '0-9.')
  awk -v a="$acc" 'BEGIN { exit !(a > 0.8) }' || fail "$variant peers reached only $acc"
done
dense=$(grep '"bytes_sent"' "$tmp/g.json" | tr -dc '0-9.e+')
sparse=$(grep '"bytes_sent"' "$tmp/choco.json" | tr -dc '0-9.e+')
awk -v d="$dense" -v s="$sparse" 'BEGIN { exit !(s * 3 < d) }' || fail "top-k gossip sent $sparse bytes, dense $dense"

# The same over CURVE: keys from `starling keygen`, every link encrypted and authenticated.
peers_config "$tmp/secure.toml" allreduce $((base + 8)) $((base + 9)) $((base + 10))
printf '[security]\ncurve = true\nkeys_dir = "keys"\n' >>"$tmp/secure.toml"
"$starling" keygen --config "$tmp/secure.toml" --out "$tmp/keys" >/dev/null 2>&1 || fail "keygen failed"
[ "$(stat -c %a "$tmp/keys/peer1.key")" = 600 ] || fail "secret key is not mode 0600"
timeout 120 "$starling" launch --config "$tmp/secure.toml" --summary "$tmp/s.json" >"$tmp/s.log" 2>&1 \
  || { cat "$tmp/s.log"; fail "CURVE launch failed"; }
grep -q '"identical_models": true' "$tmp/s.json" || fail "CURVE peers ended with different models"
rm "$tmp/keys/peer2.pub"
set +e
timeout 60 "$starling" peer --config "$tmp/secure.toml" --id 0 >"$tmp/nokey.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "peer2.pub" "$tmp/nokey.log" || { cat "$tmp/nokey.log"; fail "a missing key file must fail naming it (exit $rc)"; }

# Two peers on one endpoint: the second cannot bind, so the launcher stops the rest and fails.
peers_config "$tmp/clash.toml" allreduce $((base + 6)) $((base + 6)) $((base + 7))
set +e
timeout 120 "$starling" launch --config "$tmp/clash.toml" >"$tmp/clash.log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$tmp/clash.log"; fail "launch with a failing peer exited $rc, expected 1"; }
grep -q "stopping the others" "$tmp/clash.log" || { cat "$tmp/clash.log"; fail "no word about stopping the others"; }

expect2() {
  set +e
  "$starling" "$@" >"$tmp/out.log" 2>&1
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || { cat "$tmp/out.log"; fail "exit $rc, expected 2, for: $*"; }
}
expect2 peer --config "$tmp/ar.toml" --id 9
expect2 peer --config "$tmp/ar.toml"
STARLING_RANK=7 expect2 peer --config "$tmp/ar.toml"
expect2 train --config "$tmp/ar.toml"
printf '[exchange]\nmode = "gossip"\n[[peer]]\nid = 0\nendpoint = "tcp://127.0.0.1:1"\n' >"$tmp/one.toml"
expect2 launch --config "$tmp/one.toml"
grep -q "at least two" "$tmp/out.log" || fail "one-peer config error does not say why"

# Codecs inside the all-reduce: fp16 in the ring and top-k as a sparse all-gather still end
# with identical models, top-k with far fewer bytes than the dense all-reduce above.
for codec in fp16 topk; do
  offset=$([ "$codec" = fp16 ] && echo 20 || echo 23)
  peers_config "$tmp/ar-$codec.toml" allreduce $((base + offset)) $((base + offset + 1)) $((base + offset + 2))
  printf '[compression]\ncodec = "%s"\n' "$codec" >>"$tmp/ar-$codec.toml"
  [ "$codec" = topk ] && printf 'density = 0.05\n' >>"$tmp/ar-$codec.toml"
  timeout 120 "$starling" launch --config "$tmp/ar-$codec.toml" --summary "$tmp/ar-$codec.json" >"$tmp/ar-$codec.log" 2>&1 \
    || { cat "$tmp/ar-$codec.log"; fail "allreduce with $codec failed"; }
  grep -q '"identical_models": true' "$tmp/ar-$codec.json" || { cat "$tmp/ar-$codec.json"; fail "allreduce with $codec: models differ"; }
done
dense=$(grep '"bytes_sent"' "$tmp/ar.json" | tr -dc '0-9.e+')
sparse=$(grep '"bytes_sent"' "$tmp/ar-topk.json" | tr -dc '0-9.e+')
awk -v d="$dense" -v s="$sparse" 'BEGIN { exit !(s * 4 < d) }' || fail "top-k all-reduce sent $sparse bytes, dense $dense"
echo "launch end-to-end: ok"

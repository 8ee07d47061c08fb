#!/usr/bin/env bash
# The PyTorch DDP reference (bench/torch_ddp.py) as `starling experiment` runs it: two gloo
# ranks train the 4-peer all-reduce config's model (taken from `starling model --json`) on
# Fashion-MNIST for a sliver of an epoch, end with identical models, and write the summary
# the experiment report reads; a data set it cannot read exits 2.
set -euo pipefail
starling=$(realpath "$1")
source_dir=$(realpath "$2")
source "$(dirname "$0")/peers_config.sh"  # $tmp, removed on exit, and fail()
export STARLING_DATA_DIR=$tmp/cache

timeout 240 /usr/bin/python3 "$source_dir/bench/torch_ddp.py" --starling "$starling" \
  --config "$source_dir/configs/fmnist-mlp-4peers-allreduce.toml" --procs 2 --out-dir "$tmp/out" --name ddp \
  --set run.epochs=0.05 --set run.eval_every=1 >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "torch_ddp.py failed"; }
summary=$tmp/out/ddp.summary.json
[ -e "$summary" ] || { cat "$tmp/log"; fail "no summary"; }
grep -q '"identical_models": true' "$summary" || fail "the ranks ended with different models"
grep -q '"kind": "dense"' "$tmp/out/ddp.model.json" || fail "no model description next to the run"

set +e
/usr/bin/python3 "$source_dir/bench/torch_ddp.py" --starling "$starling" --config "$source_dir/configs/fmnist-mlp.toml" \
  --set data.dataset=synthetic --out-dir "$tmp/out2" >"$tmp/err" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || { cat "$tmp/err"; fail "an unsupported data set exited $rc, not 2"; }
echo "torch_ddp end-to-end: ok"

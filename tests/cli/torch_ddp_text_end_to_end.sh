#!/usr/bin/env bash
# The PyTorch DDP reference on text (bench/torch_ddp.py, bench/torch_ddp_text.py): its window
# draws are Starling's (the starts pinned in tests/learners/text_data_test.cpp); two gloo
# ranks train the tiny GPT for 12 steps on the iid and the by-file split, end with identical
# models, and write a Starling text peer's metrics CSV (the same header as `starling
# launch`'s peers), val_bpb at least a bit per byte below Starling's untrained models (measured
# here), tokens and the ring all-reduce's bytes; a --procs other than the config's peers exits 2.
set -euo pipefail
starling=$(realpath "$1")
source_dir=$(realpath "$2")
source "$(dirname "$0")/peers_config.sh"  # $tmp, removed on exit, fail() and tiny_gpt_job

(cd "$source_dir/bench" && /usr/bin/python3 -c '
from starling_sampling import WindowSampler, window_seed
starts = WindowSampler([(100, 119), (500, 539), (900, 905)], 10, window_seed(7, 3)).batch(5, 6)
assert starts == [529, 523, 506, 528, 515, 524], starts
') || fail "bench/starling_sampling.py draws other windows than Starling"

base=$((7800 + RANDOM % 400))
tiny_gpt_job "$tmp/job.toml" 12 $base $((base + 1))
UNTRAINED=$(untrained_bpb "$tmp/job.toml")  # Starling's models as drawn; PyTorch's must learn as far from theirs
export UNTRAINED
"$starling" launch --config "$tmp/job.toml" --in-process --set run.steps=2 --summary "$tmp/starling.json" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "starling launch of the tiny GPT failed"; }

ddp() {  # ddp NAME [--set ...]: two ranks into $tmp/NAME
  local name=$1
  shift
  timeout 240 /usr/bin/python3 "$source_dir/bench/torch_ddp.py" --starling "$starling" --config "$tmp/job.toml" \
    --out-dir "$tmp/$name" --name ddp "$@" >"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; fail "torch_ddp.py $name failed"; }
}
ddp iid
ddp by-file --set data.partition='"by-file"'
for split in iid by-file; do
  /usr/bin/python3 - "$tmp/$split" "$tmp/results/tiny-peer0.metrics.csv" "$split" <<'PY' || fail "DDP on text ($split) wrote the wrong files"
import csv, json, os, sys
out, starling_csv, split = sys.argv[1:4]
untrained = float(os.environ["UNTRAINED"])
assert 7.0 < untrained < 9.0, untrained
job = json.load(open(out + "/ddp.summary.json"))
params = json.load(open(out + "/ddp.model.json"))["parameters"]
assert job["identical_models"] and job["partition"] == split and job["steps"] == 12, job
assert job["val_bpb"] <= job["val_bpb_max"] < untrained - 1.0 and job["tokens"] == 2 * 12 * 2 * 16, (job, untrained)
assert job["bytes_sent"] == 2 * 12 * 4 * params, (job["bytes_sent"], params)  # 2 (N-1)/N * 4 bytes * params, N = 2
header = open(starling_csv).readline()
for rank in (0, 1):
    lines = open("%s/ddp-peer%d.metrics.csv" % (out, rank)).read().splitlines(True)
    assert lines[0] == header, (lines[0], header)
    rows = list(csv.DictReader(lines))
    assert [r["step"] for r in rows] == ["6", "12"], rows
    assert rows[-1]["val_bpb"] == "%.6f" % job["val_bpb"] and int(rows[-1]["bytes_sent"]) * 2 == job["bytes_sent"], rows
    assert int(rows[-1]["tokens"]) == 12 * 2 * 16 and float(rows[-1]["tokens_per_second"]) > 0, rows
PY
done

set +e
/usr/bin/python3 "$source_dir/bench/torch_ddp.py" --starling "$starling" --config "$tmp/job.toml" --procs 3 \
  --out-dir "$tmp/bad" >"$tmp/err" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "over its 2 peers" "$tmp/err" || { cat "$tmp/err"; fail "--procs 3 on 2 peers exited $rc, not 2"; }
echo "torch_ddp text end-to-end: ok"

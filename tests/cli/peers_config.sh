# Sourced by the multi-peer CLI tests: a temporary folder $tmp removed on exit and fail(),
# unless the test made its own, and peers_config FILE MODE PORT..., which writes a small job
# on synthetic data with one peer per port on loopback (ids 0, 1, ...); outputs go to $tmp/out.
# tiny_gpt_job FILE STEPS PORT... writes the same for the tiny GPT on text (tiny_gpt.sh).
if [ -z "${tmp:-}" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi
declare -F fail >/dev/null || fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/tiny_gpt.sh"

# peer_entries FILE PORT... appends one [[peer]] per port on loopback, ids 0, 1, ...
peer_entries() {
  local file=$1 id=0
  shift
  for port in "$@"; do
    printf '[[peer]]\nid = %d\nendpoint = "tcp://127.0.0.1:%d"\n' "$id" "$port" >>"$file"
    id=$((id + 1))
  done
}

peers_config() {
  local file=$1 mode=$2
  shift 2
  cat >"$file" <<TOML
[run]
name = "e2e"
epochs = 2
out_dir = "$tmp/out"
target_accuracy = 0.5
[data]
dataset = "synthetic"
synthetic_train = 1200
synthetic_test = 300
[model]
hidden = [32]
[optimizer]
lr = 0.02
batch = 16
[kernels]
backend = "native"  # not "auto": the tests compare models across runs, bit for bit
[node]
threads = 1
[exchange]
mode = "$mode"
timeout_seconds = 20
TOML
  peer_entries "$file" "$@"
}

# tiny_gpt_job FILE STEPS PORT... writes a job of one peer per port that trains the tiny GPT
# at batch 2 and rate 1e-2 (so that a dozen steps learn: see untrained_bpb) for STEPS steps
# by every-step all-reduce, validating halfway and at the end; its
# text (four files of random base64) in the folder `text` beside FILE, its cache and outputs
# in `cache` and `results` there.
tiny_gpt_job() {
  local file=$1 steps=$2 dir
  dir=$(dirname "$file")
  shift 2
  random_text "$dir/text" 6000 alpha beta gamma delta
  cat >"$file" <<TOML
[run]
name = "tiny"
data_dir = "$dir/cache"
out_dir = "$dir/results"
steps = $steps
eval_steps = $((steps / 2))
$(tiny_gpt 2 1e-2)
[kernels]
backend = "native"
threads = 1
[node]
threads = 1
[exchange]
mode = "allreduce"
timeout_seconds = 30
TOML
  peer_entries "$file" "$@"
}

# untrained_bpb FILE [ARG...]: the mean val_bpb of FILE's job (launched in process with ARGs)
# after one step at a vanishing rate: the bits per byte of its models as drawn, from which
# trained runs must fall well away. Near 8, the bits of a uniform guess over 256 bytes.
untrained_bpb() {
  local file=$1
  shift
  "$starling" launch --config "$file" --in-process --set run.steps=1 --set run.eval_steps=0 --set optimizer.lr=1e-9 "$@" \
    --summary "$tmp/untrained.json" 2>"$tmp/untrained.log" || { cat "$tmp/untrained.log"; fail "the untrained job failed"; }
  /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["val_bpb"])' "$tmp/untrained.json"
}

#!/usr/bin/env bash
# run.init_from: a GPT trained in PyTorch (bench/nanogpt.py, 200 steps on Debian's fortunes)
# and saved as safetensors is where `starling train` starts. With a learning rate too small to
# move a float32 weight, the checkpoint training writes gives the same greedy bytes from
# `starling generate` as PyTorch gives, and its validation is far below a run from the seed's
# draw. A missing file, a truncated one and a model of another shape exit 2 naming the key
# and the tensor. Skipped (77) without PyTorch or the fortunes.
#   init_from_end_to_end.sh STARLING SOURCE_DIR
set -euo pipefail
starling=$1 source_dir=$2
fortunes=/usr/share/games/fortunes
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "SKIP: /usr/bin/python3 lacks torch (python3-torch)"; exit 77; }
[ -f "$fortunes/fortunes" ] || { echo "SKIP: no $fortunes/fortunes (fortunes-min)"; exit 77; }
nanogpt="/usr/bin/python3 $source_dir/bench/nanogpt.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"
source "$(dirname "$0")/tiny_gpt.sh"

mkdir "$tmp/text"
cp "$fortunes/fortunes" "$tmp/text/fortunes"
$nanogpt train --text "$tmp/text/fortunes" --steps 200 --layers 1 --heads 2 --width 16 --context 16 \
  --out "$tmp/torch.safetensors" 2>"$tmp/log" || { cat "$tmp/log"; fail "PyTorch training failed"; }

config() {  # config NAME INIT_FROM_LINE: the tiny GPT at a learning rate that moves no weight
  cat <<TOML
[run]
name = "$1"
steps = 1
data_dir = "$tmp/cache"
out_dir = "$tmp/results"
checkpoint_dir = "$tmp/ckpt-$1"
checkpoint_every = 1
$2
$(tiny_gpt 8 1e-30)
TOML
}
config imported "init_from = \"torch.safetensors\"" >"$tmp/imported.toml"
config fresh "" >"$tmp/fresh.toml"
config missing "init_from = \"nothing.safetensors\"" >"$tmp/missing.toml"
for name in imported fresh; do
  "$starling" train --config "$tmp/$name.toml" 2>"$tmp/$name.log" || { cat "$tmp/$name.log"; fail "training $name failed"; }
done
grep -q "starting from the weights of" "$tmp/imported.log" || { cat "$tmp/imported.log"; fail "no line on the imported weights"; }

# The checkpoint holds PyTorch's weights: the same greedy bytes.
prompt="The "
$nanogpt generate --weights "$tmp/torch.safetensors" --prompt "$prompt" --bytes 64 >"$tmp/torch.txt"
"$starling" generate --config "$tmp/imported.toml" --prompt "$prompt" --bytes 64 --temperature 0 2>"$tmp/log" |
  head -c -1 | tail -c +$((${#prompt} + 1)) >"$tmp/starling.txt" || { cat "$tmp/log"; fail "generate failed"; }
cmp "$tmp/torch.txt" "$tmp/starling.txt" || { cat "$tmp/torch.txt"; echo; cat "$tmp/starling.txt"; fail "greedy bytes differ"; }

# Validation starts from the trained model, not from the draw (about 8 bits per byte).
bpb() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["val_bpb"])' "$tmp/results/$1.summary.json"; }
imported=$(bpb imported) fresh=$(bpb fresh)
echo "val_bpb from PyTorch's weights $imported, from the seed's draw $fresh"
/usr/bin/python3 -c "import sys; sys.exit(0 if $imported < $fresh - 2 else 1)" || fail "imported $imported is not 2 bits below fresh $fresh"

# Bad files exit 2 before training.
expect_exit 2 "missing.toml:[0-9]*: run.init_from: no such file" train --config "$tmp/missing.toml"
expect_exit 2 "run.init_from: .*tensor 'transformer.wpe.weight': shape \[16, 16\], this model needs \[8, 16\]" \
  train --config "$tmp/imported.toml" --set model.context=8
head -c 100 "$tmp/torch.safetensors" >"$tmp/cut.safetensors"
expect_exit 2 "run.init_from: .*truncated" train --config "$tmp/imported.toml" --set run.init_from=cut.safetensors
echo "init_from end-to-end: ok"

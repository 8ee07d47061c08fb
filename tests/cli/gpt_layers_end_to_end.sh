#!/usr/bin/env bash
# The GPT preset as a layer list: `starling model --layers` writes the tiny GPT as its
# [[model.layers]] tables, and a config with them is the same model: the same list written
# back, the same export and parameter count, and the same model bits and validation loss after
# a few training steps. Its JSON export builds the PyTorch GPT (bench/starling_model.py) with
# Starling's parameter count and per-token logits. Heads that do not divide the width exit 2
# naming file:line:key.
set -euo pipefail
starling=$(realpath "$1")
source_dir=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"
source "$(dirname "$0")/tiny_gpt.sh"

random_text "$tmp/text" 3000 alpha beta
run_section() {
  printf '[run]\nname = "%s"\ndata_dir = "%s/cache"\nout_dir = "%s/results"\nsteps = 4\neval_steps = 2\nseed = 5\n' "$1" "$tmp" "$tmp"
}
{ run_section preset; tiny_gpt 4; } >"$tmp/preset.toml"
"$starling" model --config "$tmp/preset.toml" --layers >"$tmp/layers.toml" || fail "starling model --layers failed"
{
  run_section list
  sed -n '/^\[data\]/,/^\[model\]/p' "$tmp/preset.toml" | grep -v '^\[model\]'
  cat "$tmp/layers.toml"
  sed -n '/^\[optimizer\]/,$p' "$tmp/preset.toml"
} >"$tmp/list.toml"

"$starling" model --config "$tmp/list.toml" --layers | cmp -s - "$tmp/layers.toml" || fail "the layer list does not write itself back"
for c in preset list; do "$starling" model --config "$tmp/$c.toml" --json >"$tmp/$c.json"; done
"$starling" model --config "$tmp/preset.toml" --set model.mlp='"swiglu"' --json >"$tmp/swiglu.json"
/usr/bin/python3 - "$source_dir/bench" "$tmp/preset.json" "$tmp/list.json" "$tmp/swiglu.json" <<'PY' || fail "the layer list's export is not the preset's"
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
from starling_model import torch_model
preset, listed, swiglu = (json.load(open(f)) for f in sys.argv[2:5])
assert listed["kind"] == "layers" and preset["kind"] == "gpt", (listed["kind"], preset["kind"])
for key in ("layers", "parameters", "context", "vocab", "input", "classes"):
    assert preset[key] == listed[key], key
for description in (listed, swiglu):  # the PyTorch builder's GELU and SwiGLU blocks
    model = torch_model(description)
    params = sum(p.numel() for p in model.parameters())
    out = model(torch.zeros(2, description["context"], dtype=torch.long))
    assert params == description["parameters"], (params, description["parameters"])
    assert tuple(out.shape) == (2, description["context"], description["vocab"]), out.shape
PY

for c in preset list; do
  "$starling" train --config "$tmp/$c.toml" 2>"$tmp/log" || { cat "$tmp/log"; fail "training the $c GPT failed"; }
done
/usr/bin/python3 - "$tmp/results" <<'PY' || fail "the layer list trains other bits than the preset"
import json, sys
preset, listed = (json.load(open("%s/%s.summary.json" % (sys.argv[1], c))) for c in ("preset", "list"))
assert preset["steps"] == listed["steps"] == 4, (preset["steps"], listed["steps"])
for key in ("model_checksum", "val_loss"):
    assert preset[key] == listed[key], (key, preset[key], listed[key])
PY

# The error names the line of the nested entry at fault: the first attention layer's table,
# in the first residual block.
sed 's/^heads = 2/heads = 3/' "$tmp/list.toml" >"$tmp/bad-heads.toml"
heads=$(grep -n '^heads = 3' "$tmp/bad-heads.toml" | head -1 | cut -d: -f1)
[ -n "$heads" ] || fail "no attention heads in the written list"
table=$(head -n "$heads" "$tmp/bad-heads.toml" | grep -n '^\[\[' | tail -1 | cut -d: -f1)
expect_exit 2 "bad-heads.toml:$table: model.layers\[2\].body\[1\].heads" train --config "$tmp/bad-heads.toml"
echo "gpt layers end-to-end: ok"

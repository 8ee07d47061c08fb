#!/usr/bin/env bash
# `starling model`: the architecture is defined once. The JSON export of each shipped preset
# (fitted to the synthetic set, which has Fashion-MNIST's shape) builds a PyTorch model
# through bench/starling_model.py with Starling's parameter count and output width; a bad
# config exits 2.
set -euo pipefail
starling=$(realpath "$1")
source_dir=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for kind in mlp cnn; do
  "$starling" model --config "$source_dir/configs/fmnist-$kind.toml" --set data.dataset=synthetic --json >"$tmp/$kind.json" \
    || fail "starling model --json failed for $kind"
  "$starling" model --config "$source_dir/configs/fmnist-$kind.toml" --set data.dataset=synthetic >"$tmp/$kind.txt"
  grep -q "^conv2d\|^dense" "$tmp/$kind.txt" || fail "no layer table for $kind"
  /usr/bin/python3 - "$source_dir/bench" "$tmp/$kind.json" <<'PY' || fail "the PyTorch twin of $kind differs"
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
from starling_model import torch_model
d = json.load(open(sys.argv[2]))
model = torch_model(d)
params = sum(p.numel() for p in model.parameters())
h, w, c = d["input"]
out = model(torch.zeros(2, c, h, w))
assert params == d["parameters"], (params, d["parameters"])
assert tuple(out.shape) == (2, d["classes"]), out.shape
print("%s: %d parameters, output %s" % (d["kind"], params, tuple(out.shape)))
PY
done

set +e
"$starling" model --config "$source_dir/configs/fmnist-mlp.toml" --set model.kind=resnet >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "a bad model kind exited $rc, not 2"
grep -q "model.kind" "$tmp/err" || fail "the error does not name model.kind: $(cat "$tmp/err")"
echo "model export end-to-end: ok"

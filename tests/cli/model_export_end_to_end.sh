#!/usr/bin/env bash
# `starling model`: the architecture is defined once. The JSON export of each shipped preset
# (fitted to the synthetic set, which has Fashion-MNIST's shape) builds a PyTorch model
# through bench/starling_model.py with Starling's parameter count and output width; each
# preset written as a layer list (--layers) exports the same layers; a bad config exits 2.
set -euo pipefail
starling=$(realpath "$1")
source_dir=$(realpath "$2")
source "$(dirname "$0")/peers_config.sh"  # $tmp, removed on exit, and fail()

for kind in mlp cnn cnn-layers resnet8; do
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

cmp -s <(grep -v '"kind": "layers"\|"kind": "cnn"' "$tmp/cnn.json") <(grep -v '"kind": "layers"\|"kind": "cnn"' "$tmp/cnn-layers.json") \
  || fail "the CNN written as a layer list is not the preset"

# `starling model --layers` writes each preset as a layer list that exports the same layers.
for kind in mlp cnn resnet8; do
  { printf '[data]\ndataset = "synthetic"\n'
    "$starling" model --config "$source_dir/configs/fmnist-$kind.toml" --set data.dataset=synthetic --layers; } >"$tmp/$kind-list.toml"
  "$starling" model --config "$tmp/$kind-list.toml" --json >"$tmp/$kind-list.json" || fail "the written $kind list does not load"
  cmp -s <(sed 1d "$tmp/$kind.json") <(sed 1d "$tmp/$kind-list.json") || fail "the $kind preset written as a layer list differs"
done

# exit 2 naming the key: a bad kind, and a layer list whose output does not fit the classes
# of an IDX set (known only once its files are read: 5 classes here, the list ends in 10).
expect_config_error() {
  local key=$1
  shift
  set +e
  "$starling" "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  set -e
  [ $rc -eq 2 ] || fail "$* exited $rc, not 2: $(cat "$tmp/err")"
  grep -q "$key" "$tmp/err" || fail "the error does not name $key: $(cat "$tmp/err")"
}
expect_config_error model.kind model --config "$source_dir/configs/fmnist-mlp.toml" --set model.kind=resnet
/usr/bin/python3 - "$tmp/idx" <<'PY'
import os, struct, sys
d = sys.argv[1]
os.makedirs(d)
def write(name, dims, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", x) for x in dims) + bytes(data))
for prefix, n in (("train", 20), ("t10k", 5)):
    write(prefix + "-images-idx3-ubyte", [n, 28, 28], [(i * 7) % 256 for i in range(n * 784)])
    write(prefix + "-labels-idx1-ubyte", [n], [i % 5 for i in range(n)])
PY
export STARLING_DATA_DIR=$tmp/cache
expect_config_error "model.layers\[9\].size" train --config "$source_dir/configs/fmnist-cnn-layers.toml" \
  --set data.dataset=idx --set "data.path=\"$tmp/idx\""
[ ! -e "$tmp/out" ] || fail "a refused run wrote output"
echo "model export end-to-end: ok"

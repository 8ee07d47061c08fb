#!/usr/bin/env bash
# Weights in and out of Starling as safetensors with nanoGPT's names: a GPT trained by
# `starling train` and written by `starling export` loads into PyTorch's nanoGPT module
# (bench/nanogpt.py, load_state_dict strict) and gives Starling's logits on 64 tokens within
# 1e-4; a GPT trained in PyTorch and saved as safetensors gives the same greedy bytes from
# `starling generate` as from PyTorch. Bad files and sampling options exit 2 naming the cause.
#   safetensors_end_to_end.sh STARLING GPT_LOGITS SOURCE_DIR
set -euo pipefail
starling=$1 gpt_logits=$2 source_dir=$3
nanogpt="/usr/bin/python3 $source_dir/bench/nanogpt.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"
source "$(dirname "$0")/tiny_gpt.sh"

random_text "$tmp/text" 3000 alpha beta
cat >"$tmp/gpt.toml" <<TOML
[run]
name = "tiny"
data_dir = "$tmp/cache"
out_dir = "$tmp/results"
checkpoint_dir = "$tmp/ckpt"
steps = 20
checkpoint_every = 10
$(tiny_gpt 4)
TOML

# Starling → PyTorch: the same logits.
"$starling" train --config "$tmp/gpt.toml" 2>"$tmp/log" || { cat "$tmp/log"; fail "training failed"; }
"$starling" export --config "$tmp/gpt.toml" --format safetensors -o "$tmp/m.safetensors" 2>"$tmp/log" || { cat "$tmp/log"; fail "export failed"; }
/usr/bin/python3 -c 'import random; random.seed(5); print(" ".join(str(random.randrange(256)) for _ in range(64)))' >"$tmp/ids"
"$gpt_logits" "$tmp/gpt.toml" "$tmp/m.safetensors" "$tmp/ids" "$tmp/starling.f32"
$nanogpt logits --weights "$tmp/m.safetensors" --tokens "$tmp/ids" --out "$tmp/torch.f32"
/usr/bin/python3 - "$tmp/starling.f32" "$tmp/torch.f32" <<'PY'
import sys, numpy as np
a, b = (np.fromfile(p, dtype="<f4") for p in sys.argv[1:3])
assert a.size == b.size == 64 * 256, (a.size, b.size)
err = float(np.abs(a - b).max())
print(f"max |logit difference| {err:.2e} over 64 tokens")
assert err < 1e-4, err
assert float(np.abs(a).max()) > 1e-2, "logits of an untrained-looking model"
PY
# The export is Starling's own model again: the same bytes from the checkpoint and from the file.
"$starling" generate --config "$tmp/gpt.toml" --prompt "Zm9v" --bytes 30 --temperature 0 >"$tmp/a" 2>/dev/null
"$starling" generate --config "$tmp/gpt.toml" --checkpoint "$tmp/m.safetensors" --prompt "Zm9v" --bytes 30 --temperature 0 >"$tmp/b" 2>/dev/null
cmp -s "$tmp/a" "$tmp/b" || fail "the exported file samples differently from its checkpoint"

# PyTorch → Starling: 200 steps of nanoGPT, then the same greedy bytes.
cat "$tmp/text/alpha" "$tmp/text/beta" >"$tmp/corpus"
$nanogpt train --text "$tmp/corpus" --steps 200 --layers 1 --heads 2 --width 16 --context 16 --out "$tmp/torch.safetensors" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "PyTorch training failed"; }
$nanogpt generate --weights "$tmp/torch.safetensors" --prompt "Zm9vYmFy" --bytes 48 >"$tmp/torch.txt"
"$starling" generate --config "$tmp/gpt.toml" --checkpoint "$tmp/torch.safetensors" --prompt "Zm9vYmFy" --bytes 48 --temperature 0 \
  2>"$tmp/log" | head -c -1 | tail -c +9 >"$tmp/starling.txt" || { cat "$tmp/log"; fail "generate from PyTorch's file failed"; }
cmp "$tmp/torch.txt" "$tmp/starling.txt" || { cat "$tmp/torch.txt"; echo; cat "$tmp/starling.txt"; fail "greedy bytes differ"; }

# Bad files and options.
head -c 100 "$tmp/m.safetensors" >"$tmp/cut.safetensors"
expect_exit 2 "truncated" generate --config "$tmp/gpt.toml" --checkpoint "$tmp/cut.safetensors"
expect_exit 2 "transformer.wpe.weight': shape \[16, 16\], this model needs \[32, 16\]" \
  generate --config "$tmp/gpt.toml" --set model.context=32 --checkpoint "$tmp/m.safetensors"
expect_exit 2 "top-p: must lie in (0, 1\]" generate --config "$tmp/gpt.toml" --top-p 0
expect_exit 2 "top-k: must be 0" generate --config "$tmp/gpt.toml" --top-k -1
expect_exit 2 "format: onnx is not one of" export --config "$tmp/gpt.toml" --format onnx -o "$tmp/x"
"$starling" generate --config "$tmp/gpt.toml" --prompt "Zm9v" --bytes 60 --top-k 5 --top-p 0.9 --stop "=" >"$tmp/c" 2>/dev/null
! grep -q "=" <(tail -c +5 "$tmp/c") || fail "the sample goes past its stop string"
echo "safetensors end-to-end: ok"

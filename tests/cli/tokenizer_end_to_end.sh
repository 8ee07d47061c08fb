#!/usr/bin/env bash
# SentencePiece tokens end to end: `starling train` with data.tokenizer = "sentencepiece"
# trains the missing tokenizer first (beside the checkpoints), then the GPT on its tokens,
# validating in bits per byte; `starling tokenizer train` trains one on demand (BPE or
# unigram); `generate` decodes tokens to text; `export` writes the tokenizer beside the
# safetensors file, from which `generate` and PyTorch (bench/nanogpt.py with
# python3-sentencepiece) give the same greedy text. Bad tokenizer settings exit 2 naming the key.
#   tokenizer_end_to_end.sh STARLING SOURCE_DIR
set -euo pipefail
starling=$1 source_dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"
source "$(dirname "$0")/tiny_gpt.sh"

# Seeded lines of words: text whose subwords repeat.
mkdir "$tmp/text"
words=(the star starling flies over fields at dawn and dusk once twice "," ".")
for file in a b; do
  RANDOM=7
  for ((i = 0; i < 1500; i++)); do
    line=""
    for ((w = 0; w < RANDOM % 9; w++)); do line+="${words[RANDOM % ${#words[@]}]} "; done
    echo "$line"
  done >"$tmp/text/$file"
done
config() {  # config [DATA_KEYS]: the tiny GPT on the words
  cat <<TOML
[run]
name = "sp"
data_dir = "$tmp/cache"
out_dir = "$tmp/results"
checkpoint_dir = "ckpt"
steps = 30
checkpoint_every = 30
$(tiny_gpt 8 3e-3 "$1")
TOML
}
config 'tokenizer = "sentencepiece"
vocab_size = 300' >"$tmp/sp.toml"
config "" >"$tmp/bytes.toml"

"$starling" train --config "$tmp/sp.toml" 2>"$tmp/log" || { cat "$tmp/log"; fail "training failed"; }
grep -q "tokenizer: training a SentencePiece bpe model of 300 tokens" "$tmp/log" || { cat "$tmp/log"; fail "no tokenizer training line"; }
grep -q "bytes as [0-9]* tokens" "$tmp/log" || { cat "$tmp/log"; fail "no token count"; }
[ -f "$tmp/ckpt/tokenizer.model" ] || fail "no tokenizer beside the checkpoints"
/usr/bin/python3 - "$tmp/results/sp.summary.json" <<'PY'
import json, sys
bpb = json.load(open(sys.argv[1]))["val_bpb"]
print(f"val_bpb after 30 steps on tokens: {bpb:.3f}")
assert 0.1 < bpb < 4.0, bpb  # words of a 14-word vocabulary: far below the 8 bits of a uniform byte
PY

# On demand, and the unigram model.
"$starling" tokenizer train --config "$tmp/sp.toml" --set data.tokenizer_type=unigram --set data.vocab_size=280 --set data.tokenizer_model=uni.model 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "tokenizer train failed"; }
[ -s "$tmp/uni.model" ] || fail "no unigram model written"

# Tokens decoded to text; the export carries its tokenizer.
"$starling" generate --config "$tmp/sp.toml" --prompt "the star" --bytes 12 --temperature 0 >"$tmp/a" 2>"$tmp/log" ||
  { cat "$tmp/log"; fail "generate failed"; }
[ "$(head -c 8 "$tmp/a")" = "the star" ] && [ "$(wc -c <"$tmp/a")" -gt 12 ] || { cat "$tmp/a"; fail "no continuation"; }
"$starling" export --config "$tmp/sp.toml" --format safetensors -o "$tmp/m.safetensors" 2>"$tmp/log" || { cat "$tmp/log"; fail "export failed"; }
cmp "$tmp/ckpt/tokenizer.model" "$tmp/m.tokenizer.model" || fail "the export's tokenizer differs"
"$starling" generate --config "$tmp/sp.toml" --checkpoint "$tmp/m.safetensors" --set data.tokenizer_model=gone.model \
  --prompt "the star" --bytes 12 --temperature 0 >"$tmp/b" 2>"$tmp/log" || { cat "$tmp/log"; fail "generate from the export failed"; }
cmp "$tmp/a" "$tmp/b" || fail "the export samples differently from its checkpoint"
if /usr/bin/python3 -c 'import torch, sentencepiece' 2>/dev/null; then
  /usr/bin/python3 "$source_dir/bench/nanogpt.py" generate --weights "$tmp/m.safetensors" --prompt "the star" --bytes 12 >"$tmp/torch.txt"
  head -c -1 "$tmp/a" | tail -c +9 | cmp - "$tmp/torch.txt" || { cat "$tmp/torch.txt"; fail "PyTorch's greedy text differs"; }
  echo "PyTorch's greedy text from the export: the same $(wc -c <"$tmp/torch.txt") bytes"
else
  echo "PyTorch or python3-sentencepiece missing: the PyTorch comparison skipped"
fi

# Bad settings.
expect_exit 2 "data.tokenizer_model: .*no such tokenizer model" generate --config "$tmp/sp.toml" --set data.tokenizer_model=gone.model
expect_exit 2 "data.vocab_size: expected an integer in \[1, 1000000\]" train --config "$tmp/sp.toml" --set data.vocab_size=0
expect_exit 2 "holds 300 tokens, but data.vocab_size is 400" train --config "$tmp/sp.toml" --set data.vocab_size=400
expect_exit 2 "data.vocab_size = 100: tokenizer training" tokenizer train --config "$tmp/sp.toml" --set data.vocab_size=100 \
  --set data.tokenizer_model=small.model
expect_exit 2 "data.tokenizer: expected \"sentencepiece\"" tokenizer train --config "$tmp/bytes.toml"
echo "tokenizer end-to-end: ok"

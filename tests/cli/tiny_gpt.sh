# Sourced by the text CLI tests: tiny_gpt BATCH [LR] [DATA_KEYS] prints the [data], [model]
# and [optimizer] sections of the tiny GPT they train (one block, width 16, context 16, AdamW
# at LR, 1e-3 by default) on the text folder `text` beside the config, with DATA_KEYS (TOML
# lines) added to [data]; each test writes its own [run] before them.
tiny_gpt() {
  printf '[data]\ndataset = "text"\npath = "text"\n'
  if [ -n "${3:-}" ]; then printf '%s\n' "$3"; fi
  cat <<TOML
[model]
kind = "gpt"
blocks = 1
heads = 2
width = 16
context = 16
[optimizer]
kind = "adamw"
lr = ${2:-1e-3}
batch = $1
TOML
}

# random_text DIR BYTES NAME...: a folder of text files of random base64 lines, one per name,
# each from BYTES random bytes (the text the tiny GPT trains on).
random_text() {
  local dir=$1 bytes=$2
  shift 2
  mkdir -p "$dir"
  for name in "$@"; do head -c "$bytes" /dev/urandom | base64 >"$dir/$name"; done
}

# Sourced by the text CLI tests: tiny_gpt BATCH prints the [data], [model] and [optimizer]
# sections of the tiny GPT they train (one block, width 16, context 16, AdamW) on the
# text folder `text` beside the config; each test writes its own [run] before them.
tiny_gpt() {
  cat <<TOML
[data]
dataset = "text"
path = "text"
[model]
kind = "gpt"
blocks = 1
heads = 2
width = 16
context = 16
[optimizer]
kind = "adamw"
lr = 1e-3
batch = $1
TOML
}

# tiny_gpt_job FILE STEPS PORT... writes a job of one peer per port on loopback (ids 0, 1,
# ...) that trains the tiny GPT at batch 2 for STEPS steps, validating halfway and at the
# end, every step all-reduced in one process; its text (four files of random base64) in the
# folder `text` beside FILE, its cache and outputs in `cache` and `out` there.
tiny_gpt_job() {
  local file=$1 steps=$2 dir id=0
  dir=$(dirname "$file")
  shift 2
  mkdir -p "$dir/text"
  for name in alpha beta gamma delta; do head -c 6000 /dev/urandom | base64 >"$dir/text/$name"; done
  cat >"$file" <<TOML
[run]
name = "tiny"
data_dir = "$dir/cache"
out_dir = "$dir/out"
steps = $steps
eval_steps = $((steps / 2))
$(tiny_gpt 2)
[kernels]
backend = "native"
threads = 1
[node]
threads = 1
[launch]
in_process = true
[exchange]
mode = "allreduce"
timeout_seconds = 30
TOML
  for port in "$@"; do
    printf '[[peer]]\nid = %d\nendpoint = "tcp://127.0.0.1:%d"\n' "$id" "$port" >>"$file"
    id=$((id + 1))
  done
}

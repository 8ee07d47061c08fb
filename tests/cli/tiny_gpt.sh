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

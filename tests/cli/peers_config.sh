# Sourced by the multi-peer CLI tests: a temporary folder $tmp removed on exit and fail(),
# unless the test made its own, and peers_config FILE MODE PORT..., which writes a small job
# on synthetic data with one peer per port on loopback (ids 0, 1, ...); outputs go to $tmp/out.
if [ -z "${tmp:-}" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi
declare -F fail >/dev/null || fail() { echo "FAIL: $*" >&2; exit 1; }

peers_config() {
  local file=$1 mode=$2 id=0
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
  for port in "$@"; do
    printf '[[peer]]\nid = %d\nendpoint = "tcp://127.0.0.1:%d"\n' "$id" "$port" >>"$file"
    id=$((id + 1))
  done
}

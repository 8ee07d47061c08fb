#!/usr/bin/env bash
# Text data through the executable: `starling partition` splits a folder of text across
# peers by file and by Dirichlet shares; a missing path, a folder with nothing to read and a
# file shorter than one window exit 2 naming file:line:key and the path, `starling launch`
# too, before any peer starts.
set -euo pipefail
starling=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect_exit.sh"

mkdir "$tmp/text" "$tmp/empty"
for name in alpha beta gamma delta; do head -c 3000 /dev/urandom | base64 >"$tmp/text/$name"; done
echo index >"$tmp/text/alpha.dat"
ln -s "$tmp/text/alpha" "$tmp/text/alpha.u8"
touch "$tmp/empty/.hidden"
cat >"$tmp/job.toml" <<TOML
[run]
data_dir = "$tmp/cache"
[data]
dataset = "text"
path = "text"
partition = "by-file"
[model]
context = 32
kind = "gpt"
[exchange]
mode = "allreduce"
[[peer]]
id = 0
endpoint = "tcp://127.0.0.1:7000"
[[peer]]
id = 1
endpoint = "tcp://127.0.0.1:7001"
TOML

"$starling" partition --config "$tmp/job.toml" --out "$tmp/by-file.json"
"$starling" partition --config "$tmp/job.toml" --set data.partition=dirichlet --set data.alpha=0.5 --out "$tmp/dirichlet.json"
/usr/bin/python3 - "$tmp/by-file.json" "$tmp/dirichlet.json" <<'PY' || fail "text partition export wrong"
import json, os, sys
by_file, dirichlet = (json.load(open(p)) for p in sys.argv[1:3])
names = [os.path.basename(f["path"]) for f in by_file["files"]]
assert names == ["alpha", "beta", "delta", "gamma"], names  # sorted; .dat and the link skipped
assert by_file["window"] == 33
files = [r["file"] for p in by_file["peers"] for r in p["ranges"]]
assert sorted(files) == [0, 1, 2, 3], files  # each file to one peer, whole
for p in by_file["peers"]:
    assert len(p["ranges"]) == 2 and p["window_starts"] > 0, p
for f in by_file["files"]:
    assert f["train_bytes"] == f["bytes"] - f["bytes"] // 10, f
total = sum(r["end"] - r["begin"] for p in dirichlet["peers"] for r in p["ranges"])
assert total == sum(f["train_bytes"] for f in dirichlet["files"]), total
PY

expect_exit 2 "data.path: .*nowhere: missing" partition --config "$tmp/job.toml" --set "data.path=$tmp/nowhere"
expect_exit 2 "data.path: .*empty: no text files" partition --config "$tmp/job.toml" --set "data.path=$tmp/empty"
head -c 20 /dev/urandom | base64 >"$tmp/text/short"
expect_exit 2 "job.toml:8: model.context: $tmp/text/short: its training part" partition --config "$tmp/job.toml"
rm "$tmp/text/short"
expect_exit 2 "data.path: .*nowhere: missing" launch --config "$tmp/job.toml" --set "data.path=$tmp/nowhere"
expect_exit 2 "by-file needs a file per peer" partition --config "$tmp/job.toml" --set "data.path=$tmp/text/alpha"
echo "text data end-to-end: ok"

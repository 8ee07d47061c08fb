#!/usr/bin/env bash
# `starling config`: the resolved config gives every key of the schema its value (defaults
# filled in, --set applied, paths relative to the config file), the schema exports as JSON,
# and a bad config or a missing --config exits 2.
set -euo pipefail
starling=$(realpath "$1")
source_dir=$(realpath "$2")
source "$(dirname "$0")/peers_config.sh"  # $tmp, removed on exit, and fail()
source "$(dirname "$0")/expect_exit.sh"

mkdir -p "$tmp/job"
cp "$source_dir/configs/fmnist-mlp-4peers-allreduce.toml" "$tmp/job/job.toml"
"$starling" config --config "$tmp/job/job.toml" --json --set optimizer.lr=0.5 --set run.checkpoint_dir='"ckpt"' \
  >"$tmp/resolved.json" || fail "starling config --json failed"
"$starling" config --schema --json >"$tmp/schema.json" || fail "starling config --schema --json failed"
/usr/bin/python3 - "$tmp/resolved.json" "$tmp/schema.json" "$tmp/job" <<'PY' || fail "the resolved config does not match the schema"
import json, sys
resolved, schema, job = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
keys = {row["key"] for row in schema}
given = {"%s.%s" % (s, k) for s, table in resolved.items() if s != "peer" for k in table}
given |= {"peer." + k for p in resolved["peer"] for k in p}
assert given == keys - {"model.layers"}, sorted(given ^ keys)
assert resolved["optimizer"]["lr"] == 0.5
assert resolved["exchange"]["mode"] == "allreduce" and resolved["compression"]["codec"] == "none"
assert resolved["run"]["checkpoint_dir"] == job + "/ckpt", resolved["run"]["checkpoint_dir"]
assert [p["id"] for p in resolved["peer"]] == [0, 1, 2, 3]
for row in schema:
    assert row["doc"] and ("default" in row or row["required"] or row["type"] == "layers"), row
print("starling config: %d keys resolved" % len(given))
PY

"$starling" config --config "$tmp/job/job.toml" >"$tmp/resolved.toml"
grep -q "^mode = 'allreduce'" "$tmp/resolved.toml" || fail "the TOML form lacks exchange.mode"
expect_exit 2 "--set optimizer.lr: optimizer.lr: expected a number" config --config "$tmp/job/job.toml" --set optimizer.lr=-1
expect_exit 2 "expected --config FILE or --schema" config
echo "config export end-to-end: ok"

#!/usr/bin/env bash
# The monitor under bad input: a taken metrics port exits 2 naming the port and its key
# before training; while a node trains, an unknown path gets 404, a 100 KB header is refused
# or dropped, and a flood of 500 requests leaves it training with consistent metrics. Also
# an experiment's report links the live page while it runs, and `--log-format json` makes
# every line of a short run one JSON object.
set -euo pipefail
starling=$1 src=$2
tmp=$(mktemp -d)
source "$(dirname "$0")/expect_exit.sh"
port=$((10000 + ($$ % 20000) + 200))
scrape=(/usr/bin/python3 "$(dirname "$0")/monitor_scrape.py")
trainer=
holder=
cleanup() {
  [ -z "$trainer" ] || kill -9 "$trainer" 2>/dev/null || true
  [ -z "$holder" ] || kill "$holder" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
config=$src/configs/fmnist-mlp.toml
small=(--set 'model.hidden=[32]' --set run.out_dir="$tmp/results" --set run.name=mon)

# A port held by another listener.
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); print("held", flush=True); time.sleep(120)' $port \
  >"$tmp/holder.out" &
holder=$!
for _ in $(seq 100); do grep -q held "$tmp/holder.out" && break; sleep 0.05; done
expect_exit 2 "\-\-metrics-port: the monitor's port $port" train --config "$config" "${small[@]}" --metrics-port $port
grep -q "epoch" "$tmp/out" && fail "trained although its metrics port is taken"
expect_exit 2 "monitor.metrics_port: the monitor's port $port" train --config "$config" "${small[@]}" --set monitor.metrics_port=$port
[ ! -e "$tmp/results/mon.summary.json" ] || fail "a summary was written"
kill "$holder"
holder=

# A node that trains well past the test, with its monitor on.
"$starling" train --config "$config" "${small[@]}" --set run.epochs=500 --set run.eval_every=0.5 --metrics-port $port \
  >"$tmp/train.log" 2>&1 &
trainer=$!
for _ in $(seq 200); do curl -sf http://127.0.0.1:$port/state.json | grep -q '"step":[1-9]' && break; sleep 0.1; done
"${scrape[@]}" scrape http://127.0.0.1:$port "$tmp/before.json" || { cat "$tmp/train.log"; fail "no /metrics"; }

code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/no/such/path)
[ "$code" = 404 ] || fail "an unknown path got $code, not 404"
code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/metrics/extra)
[ "$code" = 404 ] || fail "/metrics/extra got $code, not 404"
/usr/bin/python3 - $port <<'PY' || fail "a 100 KB header was answered"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n")
    answer = s.recv(64)
except OSError:  # reset while sending: dropped
    answer = b""
status = answer.split(b" ")[1] if answer.startswith(b"HTTP/") else b"dropped"
print("100 KB header:", status.decode())
sys.exit(0 if status == b"dropped" or status.startswith(b"4") else 1)
PY
# The flood: 500 requests, 8 at a time, every one answered or refused, none hanging.
/usr/bin/python3 - $port <<'PY' || fail "the flood"
import concurrent.futures, sys, urllib.request, urllib.error
base = f"http://127.0.0.1:{sys.argv[1]}"
def get(i):
    path = ["/metrics", "/state.json", "/", "/nope"][i % 4]
    try:
        with urllib.request.urlopen(base + path, timeout=10) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    codes = list(pool.map(get, range(500)))
bad = [c for i, c in enumerate(codes) if c != (404 if i % 4 == 3 else 200)]
print("flood: 500 requests,", len(bad), "unexpected answers")
sys.exit(1 if bad else 0)
PY
step() { curl -sf http://127.0.0.1:$port/state.json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["step"])'; }
s1=$(step)
sleep 1.5
s2=$(step)
[ "$s2" -gt "$s1" ] || fail "the node stopped training after the flood (step $s1, then $s2)"
"${scrape[@]}" scrape http://127.0.0.1:$port "$tmp/after.json" || fail "/metrics after the flood"
/usr/bin/python3 - "$tmp/before.json" "$tmp/after.json" <<'PY' || fail "metrics inconsistent after the flood"
import json, sys
before, after = (json.load(open(p))["samples"] for p in sys.argv[1:])
for k, v in before.items():
    if k.split("{")[0].endswith("_total") and after.get(k, -1) < v:
        sys.exit(f"{k}: {v} then {after.get(k)}")
assert after["starling_step{}"] > before["starling_step{}"], "step"
PY
kill -9 "$trainer"
trainer=

# An experiment whose variant runs with its monitor on: report.md links the live page while it runs.
cp "$config" "$tmp/base.toml"
printf '[experiment]\nname = "mon"\nbase = "base.toml"\nepochs = 500\n[[variant]]\nname = "watched"\nset = { "monitor.metrics_port" = %d, "model.hidden" = [32] }\n' \
  $port >"$tmp/experiment.toml"
"$starling" experiment --config "$tmp/experiment.toml" --out "$tmp/experiment" >"$tmp/experiment.log" 2>&1 &
trainer=$!
for _ in $(seq 200); do grep -qs "live page is \[http://127.0.0.1:$port/\]" "$tmp/experiment/report.md" && break; sleep 0.1; done
grep -q "live page is \[http://127.0.0.1:$port/\]" "$tmp/experiment/report.md" || { cat "$tmp/experiment.log"; fail "the running report links no live page"; }
kill -TERM "$trainer"
wait "$trainer" || true
trainer=
! grep -q "(running)" "$tmp/experiment/report.md" || fail "the report still says running after the experiment ended"

# JSON logs: every line of a short run (progress included) is one object with the text's fields.
"$starling" --log-format json train --config "$config" --set data.dataset=synthetic --set run.epochs=1 \
  --set run.out_dir="$tmp/results" --set run.name=json >"$tmp/json.log" 2>&1 || { cat "$tmp/json.log"; fail "json run"; }
/usr/bin/python3 - "$tmp/json.log" <<'PY' || { cat "$tmp/json.log"; fail "--log-format json"; }
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
assert all(set(o) == {"time", "level", "logger", "message"} for o in objs)
assert any(o["message"].startswith("done: test_accuracy") for o in objs)
assert any("test_accuracy" in o["message"] and o["level"] == "info" for o in objs)
print(len(objs), "JSON log lines")
PY
echo "PASS: taken port exits 2, 404, oversized header refused, flood survived, the running report links the page, JSON logs"

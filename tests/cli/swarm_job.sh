# Sourced by the open-swarm scripts (tests/cli/swarm_*.sh, bench/swarm/).
# swarm_job FILE OWNER_TOML [SECTION.KEY=VALUE...]: writes to FILE the config of a swarm job
# (the MLP on Fashion-MNIST, one learner of one thread, 4 data parts) with the owner's
# [swarm] lines from OWNER_TOML (`starling invite --new-owner-key`'s output); each
# SECTION.KEY=VALUE (VALUE as TOML) sets a key of the defaults below or adds one.
swarm_job() {
  local file=$1 owner=$2 setting section
  shift 2
  local -A value=(
    [run.name]='"swarm"' [run.epochs]=2 [data.dataset]='"fashion-mnist"' [model.kind]='"mlp"' [model.hidden]='[64]'
    [optimizer.lr]=0.05 [optimizer.momentum]=0.9 [optimizer.batch]=32 [kernels.backend]='"native"'
    [node.learners]=1 [node.threads]=1 [exchange.mode]='"allreduce"' [exchange.timeout_seconds]=30
    [exchange.start_timeout_seconds]=40 [swarm.data_parts]=4 [swarm.start_peers]=4 [swarm.join_timeout_seconds]=20
  )
  local order=(run.name run.epochs data.dataset model.kind model.hidden optimizer.lr optimizer.momentum optimizer.batch
    kernels.backend node.learners node.threads exchange.mode exchange.timeout_seconds exchange.start_timeout_seconds
    swarm.data_parts swarm.start_peers swarm.join_timeout_seconds)
  for setting in "$@"; do
    [ -n "${value[${setting%%=*}]+set}" ] || order+=("${setting%%=*}")
    value[${setting%%=*}]=${setting#*=}
  done
  : >"$file"
  for section in run data model optimizer kernels node exchange security swarm; do
    echo "[$section]" >>"$file"
    [ "$section" != swarm ] || grep -v '^\[swarm\]' "$owner" >>"$file"
    for setting in "${order[@]}"; do
      [ "${setting%%.*}" != "$section" ] || echo "${setting#*.} = ${value[$setting]}" >>"$file"
    done
  done
}

# swarm_peer LOG ARGS...: `$starling peer --config $tmp/job.toml ARGS...` in the background,
# its output in LOG, its pid appended to the array pids; with swarm_nice set, under
# `nice -n $swarm_nice` (nice execs starling: the pid is the peer's).
swarm_peer() {
  local log=$1
  shift
  ${swarm_nice:+nice -n "$swarm_nice"} "$starling" peer --config "$tmp/job.toml" "$@" >"$log" 2>&1 &
  pids+=($!)
}

# swarm_bad_join NAME PATTERN ARGS...: `$starling peer --config $tmp/job.toml ARGS...` (with
# swarm.join_timeout_seconds = 4), a join that must exit 2 saying PATTERN (a fixed string);
# its output in $tmp/NAME.log; calls the script's fail otherwise.
swarm_bad_join() {
  local name=$1 pattern=$2
  shift 2
  set +e
  timeout 60 "$starling" peer --config "$tmp/job.toml" --set swarm.join_timeout_seconds=4 "$@" >"$tmp/$name.log" 2>&1
  local code=$?
  set -e
  [ "$code" -eq 2 ] || { cat "$tmp/$name.log"; fail "$name: exit $code, expected 2"; }
  grep -qF -- "$pattern" "$tmp/$name.log" || { cat "$tmp/$name.log"; fail "$name: the message lacks '$pattern'"; }
  echo "$name: exit 2: $(grep -m1 'error' "$tmp/$name.log" | sed 's/^.*error //')"
}

# swarm_address LOG: the address a running peer logs for others to join with ("HOST:PORT",
# with CURVE "HOST:PORT/KEY"); waits up to 20 s for it.
swarm_address() {
  local line
  for _ in $(seq 200); do
    line=$(grep -m1 -o "others join with --bootstrap '.*'$" "$1" 2>/dev/null || true)
    line=${line#others join with --bootstrap \'}
    [ -z "$line" ] || { echo "${line%\'}"; return; }
    sleep 0.1
  done
  cat "$1" >&2
  echo "FAIL: $1 names no address to join with" >&2
  return 1
}

# seconds_between FROM TO: seconds from one time of day (HH:MM:SS.frac, as `date +%T.%N` and
# the logs' stamps write it) to a later one, with two decimals.
seconds_between() {
  python3 -c "
t = lambda s: sum(float(x) * f for x, f in zip(s.split(':'), (3600, 60, 1)))
print('%.2f' % ((t('$2') - t('$1')) % 86400))"
}

# swarm_gpt_job FILE OWNER_TOML PARTS STEPS OUT_DIR [EVAL_STEPS]: configs/fortunes-gpt-8peers.toml's
# GPT as a swarm job of PARTS data parts and swarm.start_peers (its roster and in-process launch
# left out) for STEPS steps, with DiLoCo at H = 50 on 4-bit (qsgd) pseudo-gradients; validated
# every EVAL_STEPS steps (default: the config's run.eval_steps).
swarm_gpt_job() {
  local file=$1 owner=$2 parts=$3 steps=$4 out=$5 eval_steps=${6:-}
  awk '/^\[\[peer\]\]/ || /^\[launch\]/ { skip = 1; next } /^\[/ { skip = 0 } !skip' \
    "$(dirname "${BASH_SOURCE[0]}")/../../configs/fortunes-gpt-8peers.toml" >"$file"
  sed -i "s|^name = .*|name = \"swarm\"\nout_dir = \"$out\"|; s|^steps = .*|steps = $steps|" "$file"
  [ -z "$eval_steps" ] || sed -i "s|^eval_steps = .*|eval_steps = $eval_steps|" "$file"
  sed -i 's|^mode = "allreduce"|mode = "local-sgd"\nperiod = 50\nouter_lr = 0.7\nouter_momentum = 0.9\nstart_timeout_seconds = 60|' "$file"
  printf '[compression]\ncodec = "qsgd"\nbits = 4\n[swarm]\n' >>"$file"
  grep -v '^\[swarm\]' "$owner" >>"$file"
  printf 'data_parts = %d\nstart_peers = %d\njoin_timeout_seconds = 60\n' "$parts" "$parts" >>"$file"
}

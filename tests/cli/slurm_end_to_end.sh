#!/usr/bin/env bash
# Starling under a real Slurm: a cluster of two nodes on loopback addresses (munged, slurmctld
# and two slurmds started here as root, tests/cli/slurm_cluster.sh) runs
# examples/slurm/starling.sbatch as a user submits it.
#   1. The endpoints' hosts are the hostlist expanded as `scontrol show hostnames` expands it.
#   2. `sbatch --wait` of 4 all-reduce peers on the 2 nodes exits 0, the 4 end with the same
#      model, and `scontrol show job` reports COMPLETED; no endpoint is written by hand.
#   3. One peer of a second job, its tasks dealt out cyclically, is killed (kill -9) inside the
#      step: the other three go on without it, as in `make faults`, and end identical.
# Skips (exit 77) only when not root or when Slurm's packages cannot be installed.
# Usage: slurm_end_to_end.sh STARLING SOURCE_DIR
set -euo pipefail
starling=$(realpath "$1")
src=$(realpath "$2")
started=$SECONDS

[ "$(id -u)" -eq 0 ] || { echo "SKIP: the Slurm test starts slurmctld, slurmd and munged, and needs root"; exit 77; }
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null ||
  ! command -v sbatch >/dev/null; then
  timeout 150 "$src/scripts/deps.sh" >&2 || { echo "SKIP: Slurm's packages cannot be installed (scripts/deps.sh failed)"; exit 77; }
fi

tmp=$(mktemp -d /tmp/starling-slurm.XXXXXX)
source "$(dirname "$0")/slurm_cluster.sh"
fail() {
  for f in "$tmp"/*.out; do [ -e "$f" ] && { echo "== $f"; grep -v "ETA\|info epoch" "$f" | tail -n 25; }; done >&2
  [ -n "${SLURM_CONF:-}" ] && { squeue; scontrol show job | grep -E "JobId=|JobState=|Reason="; } >&2 2>/dev/null
  echo "FAIL (slurm, after $((SECONDS - started)) s): $*" >&2
  exit 1
}
# Every step below is bounded, so that the test ends (and this trap stops the daemons) well
# before ctest's timeout, whose kill no trap could see.
trap 'trap "" INT TERM; slurm_cluster_down; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
field() { grep "\"$2\":" "$1" | head -1 | sed 's/.*": *//; s/[",]//g'; }
summary() { echo "$tmp/out/$1-peer$2.summary.json"; }
rows() { [ -e "$tmp/out/$1-peer$2.metrics.csv" ] && echo $(($(wc -l <"$tmp/out/$1-peer$2.metrics.csv") - 1)) || echo 0; }
job_state() { scontrol show job "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
identical() {  # identical RUN PEER...: every peer wrote a summary with the first one's model
  local run=$1 first
  shift
  first=$(field "$(summary "$run" "$1")" model_checksum)
  [ -n "$first" ] || fail "peer $1 of $run wrote no summary"
  for id in "$@"; do
    [ "$(field "$(summary "$run" "$id")" model_checksum)" = "$first" ] || fail "peer $id of $run ends with another model"
  done
}

slurm_cluster_up "$tmp/cluster" || fail "the one-node Slurm cluster did not start"
echo "slurm: cluster up after $((SECONDS - started)) s"

# 1. Starling's expansion against scontrol's, through the real config path: each list as a
# step's nodelist of one task per host, the hosts read back from the resolved endpoints.
for list in '127.0.0.[1-2]' 'node[01-03,07],gpu5' 'a[1-2]b[3-4]' 'n[8-10]' 'n[008-10],x' 'c[1-3,2],c1' 'n[1-2][3]'; do
  expected=$(scontrol show hostnames "$list")
  count=$(wc -l <<<"$expected")
  got=$(env -i PATH="$PATH" SLURM_STEP_NODELIST="$list" SLURM_STEP_TASKS_PER_NODE="1(x$count)" SLURM_PROCID=0 \
    "$starling" config --config "$src/examples/slurm/job.toml" | sed -n "s|^endpoint = .tcp://\(.*\):5600.$|\1|p") \
    || fail "starling config failed for the nodelist $list"
  [ "$got" = "$expected" ] || fail "nodelist $list: starling's hosts $(echo $got) are not scontrol's $(echo $expected)"
done

# No endpoint is written by hand: the example's config has no [[peer]] list.
! grep -q '^\[\[peer\]\]' "$src/examples/slurm/job.toml" || fail "examples/slurm/job.toml lists its peers by hand"

# A small, quick job: the example's config on synthetic data, its outputs and ports our own.
base=$((10000 + ($$ % 20000)))
small=(--set run.name=e2e --set run.out_dir="$tmp/out" --set run.epochs=2 --set run.target_accuracy=0.5
       --set data.dataset=synthetic --set data.synthetic_train=1200 --set data.synthetic_test=300
       --set model.hidden=[32] --set optimizer.lr=0.02 --set optimizer.batch=16 --set optimizer.warmup_steps=0
       --set exchange.timeout_seconds=20 --set launch.base_port=$base)
export STARLING_BIN=$starling
cd "$tmp"

# 2. Four peers by sbatch --wait, two on each node (block): exit 0, one model, COMPLETED.
set +e
timeout 90 sbatch --wait --parsable --time=5 --nodes=2 --ntasks=4 --overcommit --output="$tmp/job1.out" \
  "$src/examples/slurm/starling.sbatch" "$src/examples/slurm/job.toml" "${small[@]}" >"$tmp/job1.id"
rc=$?
set -e
job1=$(head -1 "$tmp/job1.id")
[ "$rc" -eq 0 ] || fail "sbatch --wait of job $job1 exited $rc"
identical e2e 0 1 2 3
[ "$(job_state "$job1")" = COMPLETED ] || fail "job $job1 is $(job_state "$job1"), not COMPLETED"
grep -q '"members_at_end": \["0", "1", "2", "3"\]' "$(summary e2e 3)" || fail "peer 3 did not end with all four"
grep -q "4 peers on 127.0.0.\[1-2\]" "$tmp/job1.out" || fail "the job's output does not name its 4 peers and 2 nodes"
grep -q "peer 3 of 4 from the slurm allocation, at tcp://127.0.0.2:$((base + 1))" "$tmp/job1.out" \
  || fail "peer 3 is not the second task on the second node"
echo "slurm: job $job1 of 4 peers COMPLETED with identical models after $((SECONDS - started)) s"

# 3. A longer job, its tasks dealt out cyclically (0 and 2 on the first node, 1 and 3 on the
# second), its failure detection fast as in `make faults`; peer 3 killed once it has evaluated
# twice. --kill-on-bad-exit=0 (the sbatch script's) keeps the other tasks running.
long=("${small[@]}" --set run.name=kill --set run.epochs=12 --set run.eval_every=1 --set data.synthetic_train=8000
      --set model.hidden=[64] --set exchange.heartbeat_seconds=0.2 --set exchange.failure_timeout_seconds=2
      --set exchange.start_timeout_seconds=3)
# Submitted without --wait, whose polling backs off to seconds; the test polls instead.
sbatch --parsable --time=5 --nodes=2 --ntasks=4 --distribution=cyclic --overcommit --output="$tmp/job2.out" \
  "$src/examples/slurm/starling.sbatch" "$src/examples/slurm/job.toml" "${long[@]}" >"$tmp/job2.id"
job2=$(head -1 "$tmp/job2.id")
for _ in $(seq 400); do [ "$(rows kill 3)" -ge 2 ] && break; sleep 0.1; done
[ "$(rows kill 3)" -ge 2 ] || fail "peer 3 of the second job made no progress within 40 s"
grep -q "peer 3 of 4 from the slurm allocation, at tcp://127.0.0.2:$((base + 1))" "$tmp/job2.out" \
  || fail "peer 3 is not the second task on the second node"
# scontrol listpids JOB NODE: PID JOBID STEPID LOCALID GLOBALID of the job's tasks there.
victim=$(scontrol listpids "$job2" 127.0.0.2 | awk '$3 == 0 && $5 == 3 { print $1 }' | head -1)
[ -n "$victim" ] || fail "scontrol listpids shows no task 3 on 127.0.0.2: $(scontrol listpids "$job2" 127.0.0.2)"
kill -9 "$victim"
for _ in $(seq 600); do
  case $(job_state "$job2") in PENDING | RUNNING | COMPLETING) sleep 0.1 ;; *) break ;; esac
done
state=$(job_state "$job2")
case $state in PENDING | RUNNING | COMPLETING) fail "job $job2 is still $state a minute after the kill" ;; esac
identical kill 0 1 2
[ ! -e "$(summary kill 3)" ] || fail "the killed peer wrote a summary"
for id in 0 1 2; do
  grep -q '"members_at_end": \["0", "1", "2"\]' "$(summary kill $id)" || fail "peer $id did not end with {0, 1, 2}"
  [ "$(field "$(summary kill $id)" view_changes)" -ge 1 ] || fail "peer $id saw no view change"
done
grep -Eq "peer 3 is dead" "$tmp/job2.out" || fail "the death is not logged"
# The step lost a task to a signal: srun, the batch script and so the job fail, honestly.
[ "$state" = FAILED ] || fail "job $job2 with a killed peer is $state, not FAILED"
echo "slurm: job $job2 lost peer 3 to kill -9; peers 0-2 finished identical (job $state) after $((SECONDS - started)) s"
echo "slurm end-to-end: ok in $((SECONDS - started)) s"

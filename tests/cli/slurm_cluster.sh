# Sourced by the Slurm test: a Slurm cluster of two nodes on this host, for one test's lifetime.
# The nodes are named by loopback addresses, 127.0.0.1 and 127.0.0.2, each with a slurmd of
# its own: their names resolve without DNS, so the endpoints derived from them work, and Slurm
# writes the list as the hostlist 127.0.0.[1-2].
#   slurm_cluster_up DIR   starts munged, slurmctld and the two slurmds as root (foreground
#                          daemons in the background), all state, sockets, logs and ports their
#                          own under DIR; exports SLURM_CONF; returns once both nodes are idle
#                          (at most 30 s)
#   slurm_cluster_down     cancels what is left of the cluster's jobs, stops the daemons it
#                          started by pid, and any task still carrying this cluster's SLURM_CONF
# No accounting (no slurmdbd): `scontrol show job` holds finished jobs for MinJobAge seconds.

slurm_pids=()
slurm_cgroup_mounted=

slurm_cluster_up() {
  local dir=$1 host
  host=$(hostname -s)
  # Ports of our own, below the ephemeral range and away from the peers' 10000-30000.
  local port=$((6000 + 3 * ($$ % 1000)))
  mkdir -p "$dir/state" "$dir/spool-127.0.0.1" "$dir/spool-127.0.0.2"
  chmod 700 "$dir"
  # munge: a fresh key, its socket in DIR; Slurm finds it through AuthInfo.
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge.key"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=starlingtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
# No cgroups in containers and CI: track tasks by process tree, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
# Schedule at once, and keep finished jobs visible to scontrol for the test's checks.
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
KillWait=3
# Two nodes on one host's two cores: tasks share them (the test's jobs --overcommit).
NodeName=127.0.0.1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 1)) CPUs=2 State=UNKNOWN
NodeName=127.0.0.2 NodeHostname=$host NodeAddr=127.0.0.2 Port=$((port + 2)) CPUs=2 State=UNKNOWN
PartitionName=test Nodes=127.0.0.[1-2] Default=YES MaxTime=10 State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  munged -F -f --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" >"$dir/munged.out" 2>&1 &
  slurm_pids+=($!)
  local i
  for i in $(seq 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
  [ -S "$dir/munge.sock" ] || { cat "$dir/munged.out" "$dir/munged.log" >&2; return 1; }
  slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
  slurm_pids+=($!)
  # slurmd wants cgroups at /sys/fs/cgroup even with no cgroup plugin in use. A booted Debian
  # has them; a bare chroot (a fresh debootstrap) or a container may not: there the test
  # mounts the smallest layout slurmd accepts (cgroup v1 with its named systemd hierarchy).
  if ! mountpoint -q /sys/fs/cgroup; then
    mount -t tmpfs -o mode=755 starling-cgroup /sys/fs/cgroup && slurm_cgroup_mounted=1
    mkdir -p /sys/fs/cgroup/systemd
    mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd || true
  fi
  local node
  for node in 127.0.0.1 127.0.0.2; do
    slurmd -D -N "$node" -f "$SLURM_CONF" >"$dir/slurmd-$node.out" 2>&1 &
    slurm_pids+=($!)
  done
  for i in $(seq 300); do
    [ "$(sinfo -h -o '%D %T' 2>/dev/null)" = "2 idle" ] && return 0
    sleep 0.1
  done
  echo "the Slurm nodes did not become idle within 30 s:" >&2
  sinfo >&2 || true
  tail -n 20 "$dir"/slurmctld.log "$dir"/slurmd-*.log "$dir"/*.out >&2 || true
  return 1
}

# The tasks of this cluster's jobs: processes with a job id whose environment names its config.
slurm_cluster_tasks() {
  local environ pid vars
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    vars=$({ tr '\0' '\n' <"$environ"; } 2>/dev/null) || continue
    grep -qxF "SLURM_CONF=$SLURM_CONF" <<<"$vars" && grep -q '^SLURM_JOB_ID=' <<<"$vars" && echo "$pid"
  done
  return 0
}

slurm_cluster_down() {
  [ ${#slurm_pids[@]} -gt 0 ] || return 0
  if [ -n "${SLURM_CONF:-}" ]; then
    scancel --full --signal=KILL --partition=test >/dev/null 2>&1 || true
    local i
    for i in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
    local pid
    for pid in $(slurm_cluster_tasks); do kill -9 "$pid" 2>/dev/null || true; done
  fi
  # The slurmds, slurmctld, then munged, which the others need to the end.
  for ((i = ${#slurm_pids[@]} - 1; i >= 0; i--)); do
    kill "${slurm_pids[i]}" 2>/dev/null || true
    timeout 10 tail --pid="${slurm_pids[i]}" -f /dev/null || kill -9 "${slurm_pids[i]}" 2>/dev/null || true
  done
  slurm_pids=()
  if [ -n "$slurm_cgroup_mounted" ]; then umount -R /sys/fs/cgroup || true; fi
  slurm_cgroup_mounted=
}

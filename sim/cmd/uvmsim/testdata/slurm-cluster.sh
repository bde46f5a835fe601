#!/usr/bin/env bash
# A one-node Slurm cluster on localhost for the Slurm test of uvmsim:
#   slurm-cluster.sh start DIR   write DIR/slurm.conf, start munged,
#                                slurmctld and slurmd, wait for the node
#   slurm-cluster.sh stop DIR    stop the daemons by their pid files
# Everything (key, sockets, state, logs, pid files) lives in DIR; clients
# find the cluster with SLURM_CONF=DIR/slurm.conf. Needs root and Debian's
# slurm-wlm and munge.
set -euo pipefail
action=$1
dir=$(cd "$2" && pwd)

stop() {
	for d in slurmd slurmctld munged; do
		[ -f "$dir/$d.pid" ] || continue
		pid=$(cat "$dir/$d.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$dir/$d.pid"
	done
}

case $action in
stop)
	stop
	exit 0
	;;
start) ;;
*)
	echo "usage: $0 start|stop DIR" >&2
	exit 2
	;;
esac

mkdir -p "$dir/state" "$dir/spool"
chmod 700 "$dir"
# A fresh key for this cluster only, readable by root alone as munged asks.
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge.key"
munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
	--log-file="$dir/munged.log" --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed"

cat >"$dir/slurm.conf" <<CONF
ClusterName=uvmsimtest
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MaxArraySize=10001
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -c -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N localhost
for _ in $(seq 100); do
	if sinfo -h -N -o %t 2>/dev/null | grep -qx idle; then
		echo "slurm: one-node cluster up (SLURM_CONF=$SLURM_CONF)"
		exit 0
	fi
	sleep 0.2
done
echo "slurm: the node did not become idle in 20 s" >&2
sinfo -N >&2 || true
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
stop
exit 1

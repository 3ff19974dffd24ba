#!/usr/bin/env bash
# local-cluster.sh start|stop|status: a one-node Slurm cluster on this machine,
# for the tests of "ssnmf solve -engine slurm" and for trying the sbatch
# example (scripts/slurm/example.sbatch).
#
#   start   installs Debian's slurm-wlm and munge if they are missing, writes
#           a slurm.conf for one node on the loopback address with this
#           machine's CPUs and ports 16817/16818 (not Slurm's defaults), and
#           starts munged, slurmctld (recovering no jobs of an earlier
#           start) and slurmd; it returns once the node takes jobs, after
#           which salloc, sbatch and srun work.
#   stop    stops the three daemons by the PIDs that start recorded.
#   status  prints sinfo.
#
# The state (configuration, logs, PID files, spool) lives in
# $SSNMF_SLURM_DIR (default /tmp/ssnmf-slurm). The configuration is also
# installed as /etc/slurm/slurm.conf when that is writable (as root), so
# that the client commands need no SLURM_CONF; otherwise export
# SLURM_CONF=$SSNMF_SLURM_DIR/slurm.conf. Slurm's daemons run as root here,
# as in a container or a CI machine; on a shared machine use a real
# installation instead.
set -euo pipefail

dir=${SSNMF_SLURM_DIR:-/tmp/ssnmf-slurm}
node=ssnmf0

die() { echo "local-cluster.sh: $*" >&2; exit 1; }

install() {
	command -v slurmctld >/dev/null && command -v munged >/dev/null && return
	[ "$(id -u)" = 0 ] || die "slurm-wlm and munge are not installed, and installing them needs root"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q slurm-wlm munge >/dev/null ||
		die "apt-get install slurm-wlm munge failed"
}

configure() {
	mkdir -p "$dir"/ctld "$dir"/spool "$dir"/munge
	chmod 700 "$dir"/munge
	if [ ! -s "$dir"/munge/munge.key ]; then
		dd if=/dev/urandom of="$dir"/munge/munge.key bs=1024 count=1 status=none
		chmod 400 "$dir"/munge/munge.key
	fi
	cat >"$dir"/slurm.conf <<CONF
# Written by scripts/slurm/local-cluster.sh: one node on loopback.
ClusterName=ssnmf
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
# A task takes the nice value of the srun or sbatch that launched it, not
# slurmd's: "nice -n 19 go test" or "nice -n 19 salloc ..." then nices the
# steps' tasks too, on a machine shared with timing runs.
PropagatePrioProcess=1
NodeName=$node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
	if [ -w /etc/slurm ] || { [ "$(id -u)" = 0 ] && mkdir -p /etc/slurm; }; then
		cp "$dir"/slurm.conf /etc/slurm/slurm.conf
	fi
}

# running: whether the daemon of PID file $1 runs (a daemon may remove its
# file as it exits, between any test and the read).
running() {
	local pid
	pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

start() {
	install
	stop quiet
	configure
	export SLURM_CONF=$dir/slurm.conf
	munged --force --socket="$dir"/munge/munge.socket --key-file="$dir"/munge/munge.key \
		--pid-file="$dir"/munged.pid --log-file="$dir"/munged.log --seed-file="$dir"/munge/seed ||
		die "munged did not start; see $dir/munged.log"
	# -c: recover no state of an earlier start, whose jobs, left by a run
	# killed part way, would keep the node from becoming idle.
	slurmctld -c -f "$dir"/slurm.conf || die "slurmctld did not start; see $dir/slurmctld.log"
	slurmd -f "$dir"/slurm.conf -N "$node" || die "slurmd did not start; see $dir/slurmd.log"
	for _ in $(seq 100); do
		if sinfo -h -N -o %t 2>/dev/null | grep -qx 'idle'; then
			echo "local-cluster.sh: node $node is up ($(nproc) CPUs); SLURM_CONF=$dir/slurm.conf"
			return
		fi
		sleep 0.2
	done
	tail -n 5 "$dir"/slurmctld.log "$dir"/slurmd.log >&2 || true
	die "the node did not become idle within 20 s"
}

stop() {
	local f
	for f in slurmd slurmctld munged; do
		if running "$dir/$f.pid"; then
			kill "$(cat "$dir/$f.pid")"
			for _ in $(seq 50); do running "$dir/$f.pid" || break; sleep 0.1; done
		fi
		rm -f "$dir/$f.pid"
	done
	[ "${1:-}" = quiet ] || echo "local-cluster.sh: stopped"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) SLURM_CONF=$dir/slurm.conf sinfo ;;
*) die "usage: local-cluster.sh start|stop|status" ;;
esac

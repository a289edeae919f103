#!/bin/sh
# testdata/slurm/start.sh: a one-node Slurm cluster on this machine, for the
# tests of internal/external (and for trying --executor slurm by hand).
#
#   testdata/slurm/start.sh [start]   start munged, slurmctld and slurmd (no systemd) and wait until
#                                     the node is idle; a second call finds them running and does nothing
#   testdata/slurm/start.sh status    exit status 0 when the cluster answers and its node is usable
#   testdata/slurm/start.sh stop      stop slurmd and slurmctld started by this script (munged stays)
#   testdata/slurm/start.sh install   apt-get install slurm-wlm and munge (the only step that installs)
#
# Run as root. Debian 12's slurm-wlm (22.05) and munge must be installed (./build.sh test installs them).
# It writes /etc/slurm/slurm.conf (where sbatch and squeue look) for this host only: the node's CPUs and
# memory as slurmd -C reports them, select/cons_tres with up to 4 jobs a core, proctrack/linuxproc,
# task/none, no accounting, state under /var/spool/tlbo-slurm, logs under /var/log/tlbo-slurm, the
# ports 6817/6818 or the next free pair (TLBO_SLURMCTLD_PORT: another first port). A slurm.conf that this script did
# not write is left alone (the script refuses), so a real cluster's configuration is never touched.
set -eu

MARK='# written by tlbo-native testdata/slurm/start.sh'
CONF=${SLURM_CONF:-/etc/slurm/slurm.conf}
STATE=/var/spool/tlbo-slurm
LOGS=/var/log/tlbo-slurm
RUN=/run/tlbo-slurm
WAIT=${TLBO_SLURM_WAIT:-60}

say() { echo "slurm/start.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

need_root() { [ "$(id -u)" -eq 0 ] || die "must run as root (it starts munged, slurmctld and slurmd)"; }

# alive PIDFILE: the process of PIDFILE runs and is the daemon the file is named after
# (not a zombie: in a container whose init reaps nothing, a killed daemon stays one;
# not another process that reuses its pid).
alive() {
	[ -s "$1" ] || return 1
	pid=$(cat "$1" 2>/dev/null) || return 1
	[ -r "/proc/$pid/stat" ] || return 1
	read -r _ comm state _ <"/proc/$pid/stat" || return 1
	[ "$comm" = "($(basename "$1" .pid))" ] && [ "$state" != Z ]
}

node_name() { hostname -s; }

# listening PORT: some process listens on TCP PORT (read from /proc, no tools needed).
listening() {
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }'
}

# conf_port KEY: the port KEY (SlurmctldPort, SlurmdPort) of our slurm.conf, if any.
conf_port() { [ -f "$CONF" ] && sed -n "s/^$1=//p" "$CONF" | head -n 1; }

# choose_ports sets CTLD_PORT and D_PORT: those of the running cluster, else the first
# free pair from 6817 and 6818 on (another slurmctld, e.g. the host's when this runs in a
# chroot, may hold the usual ones).
choose_ports() {
	CTLD_PORT=$(conf_port SlurmctldPort)
	D_PORT=$(conf_port SlurmdPort)
	if [ -n "$CTLD_PORT" ] && alive "$RUN/slurmctld.pid"; then
		return
	fi
	CTLD_PORT=${TLBO_SLURMCTLD_PORT:-6817}
	while listening "$CTLD_PORT" || listening $((CTLD_PORT + 1)); do
		CTLD_PORT=$((CTLD_PORT + 2))
	done
	D_PORT=$((CTLD_PORT + 1))
}

write_conf() {
	local_line=$(slurmd -C | sed -n 's/^NodeName=[^ ]* //p')
	[ -n "$local_line" ] || die "slurmd -C printed no node line"
	host=$(node_name)
	choose_ports
	mkdir -p "$(dirname "$CONF")" "$STATE/ctld" "$STATE/d" "$LOGS" "$RUN"
	new=$(
		cat <<CONFEOF
$MARK
# A one-node cluster on this host for tests: no accounting database, no cgroups. Each core
# takes up to 4 jobs at once (OverSubscribe=FORCE:4): test tasks mostly wait on Slurm itself.
ClusterName=tlbo-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=$CTLD_PORT
SlurmdPort=$D_PORT
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=300
MaxArraySize=10001
NodeName=$host NodeAddr=127.0.0.1 $local_line State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONFEOF
	)
	if [ -f "$CONF" ]; then
		head -n 1 "$CONF" | grep -qxF "$MARK" || die "$CONF exists and was not written by this script; leaving it alone"
		if [ "$(cat "$CONF")" = "$new" ]; then
			return 1 # unchanged
		fi
	fi
	printf '%s\n' "$new" >"$CONF.tmp"
	mv "$CONF.tmp" "$CONF"
	say "wrote $CONF"
	return 0
}

start_munge() {
	if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
		return
	fi
	if [ ! -s /etc/munge/munge.key ]; then
		say "creating /etc/munge/munge.key"
		mkdir -p /etc/munge
		if command -v mungekey >/dev/null; then
			mungekey --create --keyfile=/etc/munge/munge.key
		else
			dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
		fi
	fi
	chown munge:munge /etc/munge /etc/munge/munge.key
	chmod 0700 /etc/munge
	chmod 0400 /etc/munge/munge.key
	for d in /run/munge /var/lib/munge /var/log/munge; do
		mkdir -p "$d"
		chown munge:munge "$d"
	done
	chmod 0755 /run/munge
	say "starting munged"
	# --force: a socket left by a munged that died is replaced.
	runuser -u munge -- /usr/sbin/munged --force
	i=0
	until munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -lt 50 ] || die "munged does not answer (see /var/log/munge/munged.log)"
		sleep 0.2
	done
}

stop_daemons() {
	for d in slurmd slurmctld; do
		if alive "$RUN/$d.pid"; then
			pid=$(cat "$RUN/$d.pid")
			say "stopping $d ($pid)"
			kill "$pid" 2>/dev/null || true
			i=0
			while alive "$RUN/$d.pid"; do
				i=$((i + 1))
				if [ "$i" -ge 100 ]; then
					kill -9 "$pid" 2>/dev/null || true
					break
				fi
				sleep 0.1
			done
		fi
		rm -f "$RUN/$d.pid"
	done
}

node_state() { timeout 10 sinfo -h -N -n "$(node_name)" -o '%T' 2>/dev/null | head -n 1; }

usable() { # the controller answers and the node can run jobs
	case "$(node_state)" in
	idle* | mixed* | allocated* | completing*) return 0 ;;
	esac
	return 1
}

start() {
	need_root
	command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null ||
		die "slurm-wlm and munge are not installed (testdata/slurm/start.sh install, or ./build.sh test)"
	changed=0
	write_conf && changed=1
	if [ "$changed" = 1 ]; then
		stop_daemons
	fi
	start_munge
	if ! alive "$RUN/slurmctld.pid"; then
		say "starting slurmctld"
		slurmctld
	fi
	if ! alive "$RUN/slurmd.pid"; then
		say "starting slurmd"
		slurmd
	fi
	deadline=$(($(date +%s) + WAIT))
	while ! usable; do
		st=$(node_state)
		case "$st" in
		down* | drain* | fail*)
			# A node left down by an earlier run (killed slurmd, changed configuration) returns to service.
			timeout 10 scontrol update NodeName="$(node_name)" State=RESUME >/dev/null 2>&1 || true
			;;
		esac
		if [ "$(date +%s)" -ge "$deadline" ]; then
			say "the node is not idle after ${WAIT}s (state '${st:-none}'); the logs' last lines:"
			tail -n 20 "$LOGS/slurmctld.log" "$LOGS/slurmd.log" >&2 || true
			exit 1
		fi
		sleep 0.5
	done
	say "cluster up: $(sinfo -h -N -o '%N %T %c CPUs %m MB' | head -n 1)"
}

case "${1:-start}" in
start) start ;;
status)
	usable
	;;
stop)
	need_root
	stop_daemons
	;;
install)
	need_root
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >&2
	;;
*)
	echo "usage: $0 [start|status|stop|install]" >&2
	exit 2
	;;
esac

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real, local Slurm cluster (Debian's 22.05, or one built by build-slurm.sh) for the integration tests: one slurmctld, NODES slurmd
# daemons (n1..nN), a private munged, fake GPUs, and a plugstack.conf that points at the
# slurm-ddp SPANK plugin. Everything lives under SDDP_CLUSTER_DIR; /etc/slurm is never used.
#
#   cluster.sh up                  start (or keep, if already up with the same config)
#   cluster.sh down                stop what `up` started and remove what it created
#   cluster.sh status              daemons and node states
#   cluster.sh wait [SECONDS]      wait until every node is idle
#   cluster.sh plugin PATH [ARGS]  point plugstack.conf at a SPANK plugin (no restart needed)
#   cluster.sh plugin none         empty plugstack.conf
#   cluster.sh pyxis SO ENROOT first|last [extra-hooks|no-extra-hooks [ARGS...]]
#                                  also register NVIDIA's pyxis, on enroot (containers.sh)
#   cluster.sh pyxis none          remove it
#   cluster.sh logs [LINES]        tails of every daemon log
#
# Knobs (environment): SDDP_CLUSTER_DIR, NODES, NODE_CPUS, GPUS_PER_NODE, RESV_PORTS (e.g. 12000-12999: MpiParams=ports=), MODE=netns|loopback,
# PROFILE=basic|production (production: cgroup proctrack and task plugins with device confinement,
# a private /tmp and /dev/shm per job, contain_spank where the Slurm has it; see README.md),
# TMP_VIEW (production: a folder outside /tmp where the host's /tmp is bind-mounted while the
# cluster is up, for a checkout under /tmp that jobs with a private /tmp could not see),
# PRIVATE_HOSTS=0|1, PLUGIN, PLUGIN_ARGS, PLUGIN_OPTIONAL, SDDP_SUBNET, CTLD_PORT, SLURMD_PORT_BASE,
# UP_TIMEOUT, SLURM_DEBUG, ENROOT_TMPFS_SIZE (cluster.sh pyxis), SLURM_PREFIX (run the Slurm
# installed there, e.g. by build-slurm.sh, instead of the system's). See tests/cluster/README.md.
#
# Must run as root: it creates network namespaces, device nodes, /etc/hosts lines, and runs the
# daemons as root (SlurmUser=root).
set -euo pipefail

readonly SELF=${BASH_SOURCE[0]}
# shellcheck source=tests/cluster/containers.sh
source "$(dirname "$SELF")/containers.sh"
DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
NODES=${NODES:-2}
NODE_CPUS=${NODE_CPUS:-8}
GPUS_PER_NODE=${GPUS_PER_NODE:-4}
# 1: each slurmd gets a private mount namespace whose /etc/hosts and /etc/resolv.conf are
# $DIR/hosts/nK and nK.resolv (copies made at start), so a test can give one node its own name
# resolution by rewriting them in place (`slurm-ddp check` faults).
PRIVATE_HOSTS=${PRIVATE_HOSTS:-0}
MODE=${MODE:-netns}
# basic: a laptop's Slurm (linuxproc, no task plugin, no job containers). production: what GPU
# sites run (cgroup/v1 proctrack and task plugins, ConstrainDevices, a private /tmp and /dev/shm
# per job through job_container/tmpfs or namespace/tmpfs, PrologFlags=Contain, contain_spank).
PROFILE=${PROFILE:-basic}
# Jobs of the production profile get a private /tmp: a checkout or build under the host's /tmp
# (a CI clone) is seen by them through TMP_VIEW, the host's /tmp bind-mounted outside it.
TMP_VIEW=${TMP_VIEW:-}
PLUGIN=${PLUGIN:-}
PLUGIN_ARGS=${PLUGIN_ARGS:-}
PLUGIN_OPTIONAL=${PLUGIN_OPTIONAL:-0}
# A /24 used only between our namespaces and the bridge in the root namespace.
SUBNET=${SDDP_SUBNET:-10.251.0}
CTLD_PORT=${CTLD_PORT:-6817}
# Loopback mode: node K's slurmd listens on 127.0.0.1:(SLURMD_PORT_BASE + K).
SLURMD_PORT_BASE=${SLURMD_PORT_BASE:-17000}
UP_TIMEOUT=${UP_TIMEOUT:-30}
SLURM_DEBUG=${SLURM_DEBUG:-info}
# Empty: the system's Slurm (Debian's packages). Otherwise a prefix holding sbin/slurmctld,
# bin/srun and lib/slurm/ (its plugins), such as tests/cluster/build-slurm.sh makes.
SLURM_PREFIX=${SLURM_PREFIX:-}
if [[ -n $SLURM_PREFIX ]]; then
  SLURM_PREFIX=${SLURM_PREFIX%/}
  export PATH="$SLURM_PREFIX/sbin:$SLURM_PREFIX/bin:$PATH"
fi

readonly BRIDGE=sddp-br0
readonly NS_PREFIX=sddp-n   # namespace of node K: sddp-nK; its veth in the root ns: sddp-vK
readonly HOSTS_MARK="# sddp-cluster:"

log() { printf 'cluster.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

usage() {
  sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$SELF" >&2
  exit 2
}

check_knobs() {
  [[ $DIR == /* ]] || die "SDDP_CLUSTER_DIR must be an absolute path: $DIR"
  [[ $DIR =~ ^[A-Za-z0-9_./+-]+$ ]] || die "SDDP_CLUSTER_DIR may only contain [A-Za-z0-9_./+-]: $DIR"
  DIR=${DIR%/}
  [[ -n $DIR ]] || die "SDDP_CLUSTER_DIR must not be /"
  # slurmstepd puts Unix sockets in $DIR/spool/nK/ and munged in $DIR/munge/: sun_path is 108 bytes.
  ((${#DIR} <= 64)) || die "SDDP_CLUSTER_DIR is too long for Unix socket paths (max 64): $DIR"
  # Everything below DIR gets deleted by `down`: insist on at least /a/b.
  [[ $DIR == /*/?* ]] || die "SDDP_CLUSTER_DIR must be at least two levels deep: $DIR"
  if ! [[ $NODES =~ ^[0-9]+$ ]] || ((NODES < 1 || NODES > 200)); then
    die "NODES must be 1..200: $NODES"
  fi
  if ! [[ $NODE_CPUS =~ ^[0-9]+$ ]] || ((NODE_CPUS < 1)); then
    die "NODE_CPUS must be >= 1: $NODE_CPUS"
  fi
  if ! [[ $GPUS_PER_NODE =~ ^[0-9]+$ ]] || ((GPUS_PER_NODE > 64)); then
    die "GPUS_PER_NODE must be 0..64: $GPUS_PER_NODE"
  fi
  [[ $MODE == netns || $MODE == loopback ]] || die "MODE must be netns or loopback: $MODE"
  [[ $PROFILE == basic || $PROFILE == production ]] || die "PROFILE must be basic or production: $PROFILE"
  # A job's /tmp is its own under the production profile: srun in a job script reads
  # plugstack.conf and slurm.conf from DIR, so DIR must be outside /tmp there.
  [[ $PROFILE == basic || $DIR != /tmp/* ]] ||
    die "PROFILE=production needs SDDP_CLUSTER_DIR outside /tmp (jobs get a private /tmp): $DIR"
  [[ -z $TMP_VIEW || ($TMP_VIEW =~ ^/[A-Za-z0-9_./+-]+$ && $TMP_VIEW != /tmp*) ]] ||
    die "TMP_VIEW must be an absolute path outside /tmp: $TMP_VIEW"
  [[ $PRIVATE_HOSTS == 0 || $PRIVATE_HOSTS == 1 ]] || die "PRIVATE_HOSTS must be 0 or 1: $PRIVATE_HOSTS"
  [[ $SUBNET =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "SDDP_SUBNET must look like 10.251.0: $SUBNET"
  [[ $UP_TIMEOUT =~ ^[0-9]+$ ]] || die "UP_TIMEOUT must be seconds: $UP_TIMEOUT"
  if [[ -n $SLURM_PREFIX && $1 != down ]]; then
    # A prefix under the host's /tmp is given through TMP_VIEW, which is mounted before it is
    # looked at (`down` needs no Slurm binary where nothing came up).
    [[ $1 != up || -z $TMP_VIEW || $SLURM_PREFIX != "$TMP_VIEW"/* ]] || tmp_view_up
    [[ $SLURM_PREFIX =~ ^/[A-Za-z0-9_./+-]+$ && -x $SLURM_PREFIX/sbin/slurmctld && -x $SLURM_PREFIX/bin/srun ]] ||
      die "SLURM_PREFIX must be an absolute path holding sbin/slurmctld and bin/srun: $SLURM_PREFIX (build one with tests/cluster/build-slurm.sh)"
    [[ -d $(slurm_plugin_dir) ]] || die "SLURM_PREFIX has no plugin directory: $(slurm_plugin_dir)"
  fi
}

# Where this Slurm's own plugins are: Debian's, or lib/slurm (lib64/slurm) of SLURM_PREFIX.
slurm_plugin_dir() {
  if [[ -z $SLURM_PREFIX ]]; then
    echo "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm"
  elif [[ -d $SLURM_PREFIX/lib64/slurm ]]; then
    echo "$SLURM_PREFIX/lib64/slurm"
  else
    echo "$SLURM_PREFIX/lib/slurm"
  fi
}

# Slurm 24.05 and later name the private /tmp plugin namespace/tmpfs (job_container/tmpfs until
# then) and can run the SPANK hooks inside it (SlurmdParameters=contain_spank).
has_namespace_plugin() { [[ -e $(slurm_plugin_dir)/namespace_tmpfs.so ]]; }

# "KEY=TYPE/NAME" when this Slurm has that plugin. Releases drop the */none plugins (23.11 and
# later have no switch/none or accounting_storage/none: leaving the key unset means none there).
plugin_setting() {
  local key=$1 type=$2
  if [[ -e $(slurm_plugin_dir)/${type/\//_}.so ]]; then echo "$key=$type"; fi
}

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root"; }

need_tools() {
  local t missing=()
  for t in slurmctld slurmd munged srun sinfo scontrol squeue scancel ip nsenter unshare \
    runuser flock ss mknod; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t")
  done
  ((${#missing[@]} == 0)) || die "missing ${missing[*]}: run tests/cluster/install-deps.sh"
}

# ---------------------------------------------------------------------------------------------
# Rendering the configuration. Pure functions of the knobs, so that `up` can compare them with
# what is running and do nothing when they match.

ctld_addr() { if [[ $MODE == netns ]]; then echo "$SUBNET.254"; else echo 127.0.0.1; fi; }
node_addr() { if [[ $MODE == netns ]]; then echo "$SUBNET.$1"; else echo 127.0.0.1; fi; }
nodelist() { if ((NODES == 1)); then echo n1; else echo "n[1-$NODES]"; fi; }

render_slurm_conf() {
  local k gres=""
  ((GPUS_PER_NODE > 0)) && gres=" Gres=gpu:$GPUS_PER_NODE"
  cat <<EOF
# Generated by tests/cluster/cluster.sh ($MODE mode, $NODES nodes). Rerun \`cluster.sh up\`
# instead of editing: a changed file makes \`up\` restart the cluster.
ClusterName=sddp
# The controller runs in the root namespace; slurmctld checks its own short hostname.
SlurmctldHost=$(hostname -s)($(ctld_addr))
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
# Our own munged on our own socket: the host's munge setup (if any) is left alone.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=$SLURM_DEBUG
SlurmdDebug=$SLURM_DEBUG
# Per node, as on a real cluster; PMIx puts its rendezvous files there.
TmpFS=$DIR/tmp/%n
# Reread by srun, sbatch and slurmstepd on every use: swapping the plugin needs no restart.
PlugStackConfig=$DIR/plugstack.conf
GresTypes=gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
$(render_profile_settings)
MpiDefault=none
${RESV_PORTS:+# Ports Slurm reserves for every step (SLURM_STEP_RESV_PORTS), which --ddp prefers.}
${RESV_PORTS:+MpiParams=ports=$RESV_PORTS}
${SLURM_PREFIX:+PluginDir=$(slurm_plugin_dir)}
$(plugin_setting JobAcctGatherType jobacct_gather/none)
$(plugin_setting AccountingStorageType accounting_storage/none)
$(plugin_setting JobCompType jobcomp/none)
$(plugin_setting SwitchType switch/none)
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
MailProg=/bin/true
PropagateResourceLimits=NONE
# A node that was down comes back as soon as its slurmd registers again.
ReturnToService=2
# Nodes declare NODE_CPUS CPUs whatever the machine has (otherwise big jobs queue forever).
SlurmdParameters=config_overrides$([[ $PROFILE == production ]] && has_namespace_plugin && echo ,contain_spank)
# Short timeouts so that tests (and failures) are quick.
SlurmctldTimeout=10
SlurmdTimeout=30
MessageTimeout=10
BatchStartTimeout=10
InactiveLimit=0
KillWait=2
MinJobAge=2
WaitTime=0
EOF
  for ((k = 1; k <= NODES; k++)); do
    if [[ $MODE == netns ]]; then
      printf 'NodeName=n%d NodeAddr=%s' "$k" "$(node_addr "$k")"
    else
      # Debian's slurmd supports several daemons on one host, told apart by port.
      printf 'NodeName=n%d NodeHostname=n%d NodeAddr=127.0.0.1 Port=%d' "$k" "$k" \
        $((SLURMD_PORT_BASE + k))
    fi
    printf ' CPUs=%d Sockets=1 CoresPerSocket=%d ThreadsPerCore=1 RealMemory=1024%s State=UNKNOWN\n' \
      "$NODE_CPUS" "$NODE_CPUS" "$gres"
  done
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
}

render_profile_settings() {
  if [[ $PROFILE == basic ]]; then
    cat <<'EOF'
# No cgroup confinement: the sandbox has no usable cgroup v2 and the nodes share one kernel.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
EOF
    return 0
  fi
  cat <<EOF
# The production profile: every step in its cgroup (v1: v2 cannot be used in this sandbox), its
# devices confined to its gres, each job its own /tmp and /dev/shm (job_container.conf).
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
PrologFlags=Contain
$(if has_namespace_plugin; then echo NamespaceType=namespace/tmpfs; else echo JobContainerType=job_container/tmpfs; fi)
EOF
}

render_job_container_conf() {
  echo "# Generated by tests/cluster/cluster.sh: a private /tmp and /dev/shm per job, kept per node."
  echo "AutoBasePath=true"
  echo "BasePath=$DIR/jobs/%n"
}

render_gres_conf() {
  local k files
  echo "# Generated by tests/cluster/cluster.sh: fake GPUs (character devices 195:N, no driver)."
  echo "AutoDetect=off"
  ((GPUS_PER_NODE > 0)) || return 0
  for ((k = 1; k <= NODES; k++)); do
    if ((GPUS_PER_NODE == 1)); then
      files="$DIR/dev/n$k/nvidia0"
    else
      files="$DIR/dev/n$k/nvidia[0-$((GPUS_PER_NODE - 1))]"
    fi
    echo "NodeName=n$k Name=gpu File=$files"
  done
}

render_cgroup_conf() {
  if [[ $PROFILE == production ]]; then
    cat <<'EOF'
# Generated by tests/cluster/cluster.sh (production profile). cgroup/v1: v2 cannot be mounted in
# this sandbox. Cores and devices are confined; memory is not (the nodes share one machine).
CgroupPlugin=cgroup/v1
ConstrainCores=yes
ConstrainDevices=yes
ConstrainRAMSpace=no
ConstrainSwapSpace=no
EOF
    # Slurm 25.11+: --signal's signal reaches a launcher's workers too, as sites running
    # torchrun under proctrack/cgroup set it (22.05 signals only slurmstepd's own children).
    [[ -z $SLURM_PREFIX ]] || echo "SignalChildrenProcesses=yes"
    return 0
  fi
  if [[ -n $SLURM_PREFIX ]]; then
    # Current Slurm runs without any cgroup plugin (and not every build has cgroup/v1).
    cat <<'EOF'
# Generated by tests/cluster/cluster.sh for the Slurm in SLURM_PREFIX. Nothing is constrained.
CgroupPlugin=disabled
EOF
    return 0
  fi
  cat <<'EOF'
# Generated by tests/cluster/cluster.sh. slurmd 22.05 always loads a cgroup plugin; autodetect
# and cgroup/v2 fail in this sandbox, v1 works. Nothing is constrained.
CgroupPlugin=cgroup/v1
ConstrainCores=no
ConstrainDevices=no
ConstrainRAMSpace=no
ConstrainSwapSpace=no
EOF
}

render_plugstack() {
  echo "# Written by tests/cluster/cluster.sh; reread by srun/sbatch/slurmstepd on every use."
  # SPANK runs each hook plugin by plugin in this order (`cluster.sh pyxis` picks pyxis's place).
  render_pyxis_line first
  if [[ -n $PLUGIN && $PLUGIN != none ]]; then
    echo "required $PLUGIN${PLUGIN_ARGS:+ $PLUGIN_ARGS}"
  fi
  render_pyxis_line last
}

# plugstack.conf, and slurm-ddp's line in it (PLUGIN, PLUGIN_ARGS) for `cluster.sh pyxis`, which
# rewrites the file without being told that line.
write_plugstack() {
  printf 'PLUGIN=%s\nPLUGIN_ARGS=%s\n' "$PLUGIN" "$PLUGIN_ARGS" | write_file "$DIR/plugin.state"
  render_plugstack | write_file "$DIR/plugstack.conf"
}

load_plugin_choice() {
  local key val
  [[ -r $DIR/plugin.state ]] || return 0
  while IFS='=' read -r key val; do
    case $key in
      PLUGIN) PLUGIN=$val ;;
      PLUGIN_ARGS) PLUGIN_ARGS=$val ;;
    esac
  done <"$DIR/plugin.state"
}

render_env() {
  cat <<EOF
# Generated by tests/cluster/cluster.sh up. Usage: source $DIR/env.sh; srun ...
export SDDP_CLUSTER_DIR=$DIR
export SLURM_CONF=$DIR/slurm.conf
${SLURM_PREFIX:+export PATH=$SLURM_PREFIX/sbin:$SLURM_PREFIX/bin:\$PATH}
${SLURM_PREFIX:+export SDDP_CLUSTER_SLURM_PREFIX=$SLURM_PREFIX}
export SDDP_CLUSTER_MODE=$MODE
export SDDP_CLUSTER_NODES=$NODES
export SDDP_CLUSTER_NODELIST='$(nodelist)'
export SDDP_CLUSTER_NODE_CPUS=$NODE_CPUS
export SDDP_CLUSTER_GPUS_PER_NODE=$GPUS_PER_NODE
export SDDP_CLUSTER_PRIVATE_HOSTS=$PRIVATE_HOSTS
export SDDP_CLUSTER_PROFILE=$PROFILE
$([[ $PROFILE == production ]] && echo "export SDDP_WORK_ROOT=$DIR/work")
EOF
}

fingerprint() {
  { render_slurm_conf; render_gres_conf; render_cgroup_conf; render_job_container_conf
    echo "MODE=$MODE SUBNET=$SUBNET PRIVATE_HOSTS=$PRIVATE_HOSTS PROFILE=$PROFILE TMP_VIEW=$TMP_VIEW"; } |
    sha256sum | cut -d' ' -f1
}

# Atomic write: srun may read plugstack.conf at any moment.
write_file() {
  local tmp
  tmp=$(mktemp "$1.XXXXXX")
  cat >"$tmp"
  chmod 0644 "$tmp"
  mv -f "$tmp" "$1"
}

# ---------------------------------------------------------------------------------------------
# Processes. We only ever signal PIDs that (a) come from our PID files or our namespaces and
# (b) still look like ours, so a recycled PID or a foreign Slurm is never touched.

# True when PID's command line names a path inside $DIR (our daemons all get -f/--socket there).
cmdline_is_ours() {
  local cmd
  cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
  [[ $cmd == *"$DIR/"* ]]
}

pid_from_file() {
  local pid
  [[ -r $1 ]] || return 1
  read -r pid <"$1" || return 1
  [[ $pid =~ ^[0-9]+$ ]] && [[ -d /proc/$pid ]] && cmdline_is_ours "$pid" && echo "$pid"
}

# Wait until all PIDs are gone, up to $1 tenths of a second.
wait_gone() {
  local tenths=$1 pid alive
  shift
  while ((tenths-- > 0)); do
    alive=0
    for pid in "$@"; do [[ -d /proc/$pid ]] && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  return 1
}

# TERM, wait, then KILL.
terminate() {
  (($# > 0)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  wait_gone 100 "$@" && return 0
  log "still alive after 10 s, sending KILL: $*"
  kill -KILL "$@" 2>/dev/null || true
  wait_gone 50 "$@" || log "warning: could not kill: $*"
}

# Tasks get TERM and 2 s to exit, as on `scancel`; slurmstepd ignores TERM, so it gets KILL.
kill_leftovers() {
  local p
  local -a steps=() tasks=()
  for p in "$@"; do
    if [[ $(cat "/proc/$p/comm" 2>/dev/null) == slurmstepd ]]; then steps+=("$p"); else tasks+=("$p"); fi
  done
  if ((${#tasks[@]})); then
    kill -TERM "${tasks[@]}" 2>/dev/null || true
    wait_gone 20 "${tasks[@]}" || kill -KILL "${tasks[@]}" 2>/dev/null || true
  fi
  ((${#steps[@]} == 0)) || kill -KILL "${steps[@]}" 2>/dev/null || true
  wait_gone 50 "$@" || log "warning: could not kill: $*"
}

# "pid(comm) ..." for log messages.
describe_pids() {
  local p
  for p in "$@"; do printf '%s(%s) ' "$p" "$(cat "/proc/$p/comm" 2>/dev/null || echo gone)"; done
}

# This shell and its ancestors: never candidates for killing, even inside our namespaces.
protected_pids() {
  local pid=$$ ppid
  while [[ $pid =~ ^[0-9]+$ ]] && ((pid > 1)); do
    echo "$pid"
    ppid=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
    pid=$ppid
  done
}

# Our namespaces: those of the nodes in our state file, and only while no other cluster
# claims the (global) names.
our_netns() {
  local k
  [[ $MODE == netns && -r $DIR/cluster.state && -z $(foreign_cluster) ]] || return 0
  for ((k = 1; k <= NODES; k++)); do
    [[ -e /run/netns/$(ns_name "$k") ]] && echo "/run/netns/$(ns_name "$k")"
  done
  return 0
}

# Processes left over from our cluster: anything inside our network namespaces, our daemons
# (found by the $DIR paths on their command line), slurmstepds writing our logs or sockets, and
# every descendant of those (the job tasks).
leftover_pids() {
  local -A roots=() skip=()
  local f p comm
  while read -r p; do skip[$p]=1; done < <(protected_pids)
  while read -r f; do
    for p in $(ip netns pids "${f#/run/netns/}" 2>/dev/null); do
      [[ -n ${skip[$p]:-} ]] || roots[$p]=1
    done
  done < <(our_netns)
  # Builtins only in this loop: it visits every process on the machine.
  for f in /proc/[0-9]*; do
    p=${f#/proc/}
    [[ -n ${skip[$p]:-} || -n ${roots[$p]:-} ]] && continue
    read -r comm 2>/dev/null <"$f/comm" || continue
    case $comm in
      slurmctld | slurmd | munged)
        cmdline_is_ours "$p" && roots[$p]=1
        ;;
      slurmstepd)
        [[ -n $(find "$f/fd" -maxdepth 1 -lname "$DIR/*" -print -quit 2>/dev/null) ]] &&
          roots[$p]=1
        ;;
    esac
  done
  ((${#roots[@]})) || return 0
  # Add descendants: tasks of a slurmstepd stay in its tree even in loopback mode.
  ps -e -o pid=,ppid= | awk -v roots="${!roots[*]}" -v skip="${!skip[*]}" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) mark[r[i]] = 1
            m = split(skip, s, " "); for (i = 1; i <= m; i++) keep[s[i]] = 1 }
    { parent[$1] = $2 }
    END { changed = 1
          while (changed) { changed = 0
            for (p in parent) if (!(p in mark) && (parent[p] in mark) && !(p in keep)) {
              mark[p] = 1; changed = 1 } }
          for (p in mark) if (p in parent) print p }' | sort -n
}

# ---------------------------------------------------------------------------------------------
# Network.

ns_name() { echo "$NS_PREFIX$1"; }

# Can this machine give us network namespaces, veths and a bridge? Tried once, then undone.
netns_usable() {
  # Interface names are limited to 15 characters; the lock keeps these names unique.
  local probe="${NS_PREFIX}probe" ok=1
  ip netns add "$probe" 2>/dev/null || return 1
  ip link add sddp-probev type veth peer name eth0 netns "$probe" 2>/dev/null || ok=0
  if ((ok)); then
    ip link add sddp-probeb type bridge 2>/dev/null || ok=0
    ip link del sddp-probeb 2>/dev/null || true
    ip link del sddp-probev 2>/dev/null || true
  fi
  nsenter --net="/run/netns/$probe" unshare --uts true 2>/dev/null || ok=0
  ip netns del "$probe" 2>/dev/null || true
  ((ok))
}

net_up() {
  local k ns
  if ip -4 -o addr show | grep -q " $SUBNET\."; then
    die "$SUBNET.0/24 is already in use on this host: set SDDP_SUBNET to another private /24"
  fi
  # The kernel's ARP table is one for all namespaces (gc_thresh3 caps the total: 1024 by
  # default), and a full mesh between N nodes (gloo) needs ~N^2 entries; past the cap new
  # neighbours are refused ("neighbor table overflow") and connects fail. Only ever raised.
  local want=$((2 * NODES * NODES + 1024))
  if (($(sysctl -n net.ipv4.neigh.default.gc_thresh3) < want)); then
    sysctl -qw net.ipv4.neigh.default.gc_thresh2="$((want / 2))" \
      net.ipv4.neigh.default.gc_thresh3="$want"
  fi
  ip link add "$BRIDGE" type bridge
  ip addr add "$SUBNET.254/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for ((k = 1; k <= NODES; k++)); do
    ns=$(ns_name "$k")
    ip netns add "$ns"
    ip link add "sddp-v$k" type veth peer name eth0 netns "$ns"
    ip link set "sddp-v$k" master "$BRIDGE" up
    ip -n "$ns" addr add "$SUBNET.$k/24" dev eth0
    ip -n "$ns" link set eth0 up
    # Tasks (gloo, NCCL's bootstrap) also talk to themselves over 127.0.0.1.
    ip -n "$ns" link set lo up
    # Lets a node reach the host's other addresses through the bridge.
    ip -n "$ns" route add default via "$SUBNET.254"
  done
}

net_down() {
  local k ns
  for ((k = 1; k <= ${1:-0}; k++)); do
    ns=$(ns_name "$k")
    # Deleting the namespace also deletes its end of the veth pair, and with it ours.
    if [[ -e /run/netns/$ns ]]; then ip netns del "$ns" || log "warning: ip netns del $ns failed"; fi
    if ip link show "sddp-v$k" >/dev/null 2>&1; then ip link del "sddp-v$k" 2>/dev/null || true; fi
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE" 2>/dev/null || true; fi
}

# /etc/hosts: bind-mounted in containers, so rewrite it in place instead of replacing it.
hosts_remove() {
  local tmp
  grep -qF "$HOSTS_MARK$DIR" /etc/hosts || return 0
  tmp=$(mktemp)
  grep -vF "$HOSTS_MARK$DIR" /etc/hosts >"$tmp" || true
  cat "$tmp" >/etc/hosts
  rm -f "$tmp"
}

# The controller's bridge address gets a name too: srun and slurmctld connect from it, and
# slurmctld 25.11 looks every peer address up in reverse; without a line here each lookup goes to
# the machine's DNS server, and where that does not answer (a sandbox, an offline CI runner) every
# message from slurmctld to a slurmd waits out the resolver's timeout (~10 s: nodes stay
# "completing" after each job).
# The same holds for the IPv4-mapped IPv6 form of each address (::ffff:10.251.0.1): PyTorch's
# TCPStore (libuv, dual-stack since 2.4) sees its peers that way and looks each up in reverse
# (c10d socket.cpp), which /etc/hosts answers only for that exact spelling: ~10 s per look-up
# otherwise, in every torch step. Distinct names keep forward look-ups of nK IPv4-only.
hosts_add() {
  local k
  hosts_remove
  {
    for ((k = 1; k <= NODES; k++)); do
      printf '%s\tn%d\t%s\n' "$(node_addr "$k")" "$k" "$HOSTS_MARK$DIR"
      printf '::ffff:%s\tn%d-v4mapped\t%s\n' "$(node_addr "$k")" "$k" "$HOSTS_MARK$DIR"
    done
    if [[ $MODE == netns ]]; then printf '%s\tsddp-ctld\t%s\n' "$(ctld_addr)" "$HOSTS_MARK$DIR"; fi
    # ::1 only where the machine's own file lacks it (Debian's has "::1 localhost ip6-localhost").
    grep -qE '^::1[[:space:]]' /etc/hosts || printf '::1\tip6-localhost\t%s\n' "$HOSTS_MARK$DIR"
  } >>/etc/hosts
}

# The SDDP_CLUSTER_DIR of another cluster that is up (its /etc/hosts lines), if any.
foreign_cluster() {
  grep -oE "${HOSTS_MARK}[^[:space:]]+" /etc/hosts | sed "s|^$HOSTS_MARK||" | sort -u |
    grep -vxF "$DIR" | head -n1 || true
}

# A cluster from another SDDP_CLUSTER_DIR would clash on namespaces, ports and host names.
check_no_foreign_cluster() {
  local other
  other=$(foreign_cluster)
  [[ -z $other ]] || die "another cluster is up (SDDP_CLUSTER_DIR=$other); stop it first:
  SDDP_CLUSTER_DIR=$other $SELF down"
}

# Lazily unmounts FOLDER and every mount below it, innermost first.
unmount_below() {
  local m
  while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done < <(awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r)
}

# The job container plugins mount each job's directories, and slurmd its BasePath, under
# $DIR/jobs; whatever a crash left mounted there goes before the files.
unmount_job_containers() { unmount_below "$DIR/jobs"; }

# --ddp=requeue's markers (libbootstrap/src/core/task/requeue_marker.hpp) name a job by its id,
# and a fresh cluster numbers its jobs from 1 again: one an earlier cluster (or a killed test)
# left would belong to this cluster's job of that id. On one machine every node shares /run.
requeue_markers_reset() { rm -f /run/slurm-ddp/requeue.*; }

# The host's /tmp seen at TMP_VIEW while the cluster is up (non-recursive: only /tmp itself).
tmp_view_up() {
  [[ -n $TMP_VIEW ]] || return 0
  mkdir -p "$TMP_VIEW"
  mountpoint -q "$TMP_VIEW" || mount --bind /tmp "$TMP_VIEW" || die "cannot bind-mount /tmp at $TMP_VIEW"
}
tmp_view_down() {
  [[ -n $TMP_VIEW ]] && mountpoint -q "$TMP_VIEW" || return 0
  umount "$TMP_VIEW" 2>/dev/null || umount -l "$TMP_VIEW" || log "warning: cannot unmount $TMP_VIEW"
  rmdir "$TMP_VIEW" 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------------
# Daemons.

start_munged() {
  local sock=$DIR/munge/munge.socket i
  install -d -o munge -g munge -m 0755 "$DIR/munge"
  # A fresh key for every cluster: nothing else can forge our credentials, and we need not
  # read /etc/munge/munge.key.
  (umask 077 && head -c 1024 /dev/urandom >"$DIR/munge/munge.key")
  chown munge:munge "$DIR/munge/munge.key"
  chmod 0400 "$DIR/munge/munge.key"
  runuser -u munge -- munged --socket="$sock" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
    --seed-file="$DIR/munge/munged.seed" </dev/null >>"$DIR/log/boot.log" 2>&1 9>&- ||
    die_logs "munged failed to start"
  for ((i = 0; i < 50; i++)); do
    [[ -S $sock ]] && break
    sleep 0.1
  done
  munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1 ||
    die_logs "munged does not answer on $sock"
}

port_busy() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

start_slurmctld() {
  port_busy "$CTLD_PORT" && die "TCP port $CTLD_PORT is in use (another slurmctld?): set CTLD_PORT"
  SLURM_CONF="$DIR/slurm.conf" slurmctld -f "$DIR/slurm.conf" -i \
    </dev/null >>"$DIR/log/boot.log" 2>&1 9>&- || die_logs "slurmctld failed to start"
}

start_slurmd() {
  local k=$1
  # Give each slurmd its own UTS namespace so that `hostname` in a task says nK. In netns mode
  # nsenter joins the node's network namespace; `ip netns exec` would remount /sys and hide
  # the cgroup tree from slurmd.
  local -a prefix=()
  [[ $MODE == netns ]] && prefix=(nsenter --net="/run/netns/$(ns_name "$k")")
  if [[ $PRIVATE_HOSTS == 1 ]]; then
    install -d "$DIR/hosts" && cat /etc/hosts >"$DIR/hosts/n$k" &&
      cat /etc/resolv.conf >"$DIR/hosts/n$k.resolv"
    # shellcheck disable=SC2016 # $1, $2 and $@ belong to the inner shell
    prefix+=(unshare --mount -- /bin/sh -c 'mount --bind "$1" /etc/hosts &&
      mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"' sh
      "$DIR/hosts/n$k" "$DIR/hosts/n$k.resolv")
  fi
  # $DIR/containers/bin first on PATH: pyxis runs `enroot` from there (containers.sh).
  # shellcheck disable=SC2016 # $1 and $@ belong to the inner shell
  "${prefix[@]}" unshare --uts -- /bin/sh -c 'hostname "$1" && shift && exec "$@"' sh "n$k" \
    env SLURM_CONF="$DIR/slurm.conf" PATH="$(containers_dir)/bin:$PATH" \
    slurmd -f "$DIR/slurm.conf" -N "n$k" \
    </dev/null >>"$DIR/log/boot.log" 2>&1 9>&- || die_logs "slurmd n$k failed to start"
}

# ---------------------------------------------------------------------------------------------
# Queries.

slurm() { SLURM_CONF="$DIR/slurm.conf" "$@"; }

# "nK state" per node, or nothing when slurmctld does not answer.
node_states() { slurm timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | sort -u; }

# Wait until all $NODES nodes are idle; $1 = seconds.
wait_idle() {
  local deadline states idle
  deadline=$(($(date +%s) + $1))
  while :; do
    states=$(node_states || true)
    idle=$(awk '$2 == "idle"' <<<"$states" | wc -l)
    ((idle == NODES)) && return 0
    (($(date +%s) >= deadline)) && break
    sleep 0.2
  done
  log "nodes not idle after $1 s:"
  printf '%s\n' "${states:-  (slurmctld does not answer)}" >&2
  return 1
}

# A failed `up` leaves everything running for debugging: `status`, `logs`, then `down`.
die_logs() {
  show_logs 30
  die "$* (the cluster is left as it is for debugging; \`$SELF down\` cleans up)"
}

show_logs() {
  local lines=${1:-25} f
  for f in "$DIR/log/boot.log" "$DIR/munge/munged.log" "$DIR/log/slurmctld.log" \
    "$DIR"/log/slurmd-*.log; do
    [[ -s $f ]] || continue
    printf '===== %s (last %d lines) =====\n' "$f" "$lines" >&2
    tail -n "$lines" "$f" >&2
  done
}

# Saved by `up`: what `down` and `status` must know even when the environment differs.
load_state() {
  [[ -r $DIR/cluster.state ]] || return 1
  local key val
  while IFS='=' read -r key val; do
    case $key in
      MODE) MODE=$val ;;
      NODES) NODES=$val ;;
      SUBNET) SUBNET=$val ;;
      FINGERPRINT) STATE_FINGERPRINT=$val ;;
      TMP_VIEW) TMP_VIEW=$val ;;
    esac
  done <"$DIR/cluster.state"
}

# Every daemon alive, every node answering and usable: then `up` can be a no-op.
healthy() {
  local k states
  pid_from_file "$DIR/munge/munged.pid" >/dev/null || return 1
  pid_from_file "$DIR/run/slurmctld.pid" >/dev/null || return 1
  for ((k = 1; k <= NODES; k++)); do
    pid_from_file "$DIR/run/slurmd-n$k.pid" >/dev/null || return 1
  done
  grep -qF "$HOSTS_MARK$DIR" /etc/hosts || return 1
  states=$(node_states) || return 1
  [[ $(wc -l <<<"$states") -eq $NODES ]] || return 1
  # idle, mixed, allocated, completing are fine; down, drain, fail, unknown (*) are not.
  ! awk '$2 !~ /^(idle|mixed|allocated|completing)$/ { bad = 1 } END { exit !bad }' <<<"$states"
}

# ---------------------------------------------------------------------------------------------
# Commands.

cmd_up() {
  local t0 fp k ts n
  t0=$(now)
  need_root
  need_tools
  # `down` deletes subdirectories of DIR: only ever work in a directory we created.
  if [[ -d $DIR && ! -e $DIR/.sddp-cluster && -n $(ls -A "$DIR") ]]; then
    die "$DIR exists, is not empty and was not made by cluster.sh: choose another SDDP_CLUSTER_DIR"
  fi
  mkdir -p "$DIR"
  touch "$DIR/.sddp-cluster"
  exec 9>"$DIR/.lock"
  flock -w 120 9 || die "another cluster.sh holds $DIR/.lock"
  check_no_foreign_cluster

  if [[ $MODE == netns ]] && ! netns_usable; then
    log "network namespaces (or veth/bridge/nsenter) are not available here:" \
      "falling back to MODE=loopback (all nodes on 127.0.0.1, one slurmd port each)"
    MODE=loopback
  fi
  if [[ -n $PLUGIN && $PLUGIN != none ]]; then
    [[ $PLUGIN == /* ]] || PLUGIN=$(realpath -m "$PLUGIN")
    if [[ ! -r $PLUGIN ]]; then
      [[ $PLUGIN_OPTIONAL == 1 ]] || die "PLUGIN not found: $PLUGIN"
      log "PLUGIN $PLUGIN does not exist (yet): plugstack.conf left empty;" \
        "run \`$SELF plugin $PLUGIN\` once it is built"
      PLUGIN=""
    fi
  fi

  fp=$(fingerprint)
  STATE_FINGERPRINT=""
  if [[ -r $DIR/cluster.state ]]; then
    local want_mode=$MODE want_nodes=$NODES want_subnet=$SUBNET
    load_state
    if [[ $STATE_FINGERPRINT == "$fp" ]] && healthy; then
      write_plugstack
      render_env | write_file "$DIR/env.sh"
      log "already up with the same configuration ($MODE, $(nodelist)); plugstack.conf refreshed"
      return 0
    fi
    log "configuration changed or cluster unhealthy: restarting"
    cmd_down_locked
    MODE=$want_mode NODES=$want_nodes SUBNET=$want_subnet
  fi
  # Leftovers from a crashed run without a state file: refuse rather than guess.
  local -a stale
  mapfile -t stale < <(leftover_pids)
  ((${#stale[@]} == 0)) || die "processes of an earlier cluster in $DIR are still running:" \
    "$(describe_pids "${stale[@]}"); run \`$SELF down\` first"

  # Fresh state: keep the previous logs for post-mortems, drop everything else.
  rm -rf "$DIR/log.prev"
  [[ -d $DIR/log ]] && mv "$DIR/log" "$DIR/log.prev"
  # Job containers an earlier cluster left in a spool or base path would make every job fail
  # ("container_p_join: open failed for .../.ns").
  unmount_job_containers
  containers_reset
  requeue_markers_reset
  rm -rf "${DIR:?}/state" "${DIR:?}/spool" "${DIR:?}/run" "${DIR:?}/tmp" "${DIR:?}/dev" \
    "${DIR:?}/munge" "${DIR:?}/jobs" "${DIR:?}/work"
  mkdir -p "$DIR/log" "$DIR/state" "$DIR/run"
  # Files a test's job steps share (the production profile's jobs cannot share /tmp).
  install -d -m 1777 "$DIR/work"
  for ((k = 1; k <= NODES; k++)); do
    mkdir -p "$DIR/spool/n$k" "$DIR/tmp/n$k" "$DIR/dev/n$k"
    # tmp is per node but shared by every job user, like /tmp.
    chmod 1777 "$DIR/tmp/n$k"
    for ((n = 0; n < GPUS_PER_NODE; n++)); do
      mknod -m 666 "$DIR/dev/n$k/nvidia$n" c 195 "$n"
    done
  done
  render_slurm_conf | write_file "$DIR/slurm.conf"
  render_gres_conf | write_file "$DIR/gres.conf"
  render_cgroup_conf | write_file "$DIR/cgroup.conf"
  render_job_container_conf | write_file "$DIR/job_container.conf"
  write_plugstack
  render_env | write_file "$DIR/env.sh"
  # Written before anything is created, so that `down` can undo a half-finished `up`.
  printf 'MODE=%s\nNODES=%s\nSUBNET=%s\nFINGERPRINT=%s\nTMP_VIEW=%s\n' "$MODE" "$NODES" "$SUBNET" \
    "$fp" "$TMP_VIEW" | write_file "$DIR/cluster.state"
  tmp_view_up

  start_munged
  [[ $MODE == netns ]] && net_up
  hosts_add
  start_slurmctld
  for ((k = 1; k <= NODES; k++)); do start_slurmd "$k"; done

  wait_idle "$UP_TIMEOUT" || die_logs "cluster did not come up within $UP_TIMEOUT s"
  # Proof that jobs really run on every node, bounded so that a hang cannot stall the tests.
  ts=$(now)
  local out want got
  # From DIR: a job may not see the caller's folder (a private /tmp), and Slurm says so on stderr.
  if ! out=$(slurm timeout 30 srun --chdir="$DIR" -N"$NODES" -n"$NODES" hostname 2>&1); then
    printf '%s\n' "$out" >&2
    die_logs "srun -N$NODES hostname failed"
  fi
  want=$(for ((k = 1; k <= NODES; k++)); do echo "n$k"; done)
  got=$(sort -V <<<"$out")
  [[ $got == "$want" ]] || die_logs "srun -N$NODES hostname printed: $(tr '\n' ' ' <<<"$out")"
  log "up: $MODE mode, nodes $(nodelist), $NODE_CPUS CPUs and $GPUS_PER_NODE GPUs each;" \
    "srun -N$NODES hostname took $(elapsed "$ts") s; total $(elapsed "$t0") s"
  log "use: source $DIR/env.sh"
}

# Called with the lock held (from `down` and from `up` when it restarts).
cmd_down_locked() {
  local k f left jobs pids names ts have_state=1
  # Without a state file, undo only what is unambiguously ours (processes found through our
  # PID files and paths, our /etc/hosts lines), never the shared bridge.
  load_state || have_state=0
  # Cancel jobs first so that slurmstepd kills the tasks the proper way.
  if pid_from_file "$DIR/run/slurmctld.pid" >/dev/null; then
    jobs=$(slurm timeout 5 squeue -h -o %A 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      # shellcheck disable=SC2086 # one job id per word
      slurm timeout 5 scancel $jobs 2>/dev/null || true
      ts=$(date +%s)
      while [[ -n $(slurm timeout 5 squeue -h -o %A 2>/dev/null | head -c1) ]] &&
        (($(date +%s) - ts < 8)); do
        sleep 0.2
      done
    fi
  fi
  # Each daemon takes about 2 s to exit on TERM: stop them all at once. Jobs are gone by now,
  # so munged may go with them; leftover steps are killed without needing it.
  pids=() names=()
  for f in "$DIR/run/slurmctld.pid" "$DIR"/run/slurmd-*.pid "$DIR/munge/munged.pid"; do
    [[ -e $f ]] || continue
    if k=$(pid_from_file "$f"); then
      pids+=("$k")
      names+=("$(cat "/proc/$k/comm" 2>/dev/null)($k)")
    fi
    rm -f "$f"
  done
  if ((${#pids[@]})); then
    terminate "${pids[@]}"
    log "stopped ${names[*]}"
  fi
  # slurmstepd outlives slurmd by design (so that slurmd can restart under running jobs): kill
  # what is left of ours, tasks included.
  mapfile -t left < <(leftover_pids)
  if ((${#left[@]})); then
    log "killing leftover processes: $(describe_pids "${left[@]}")"
    kill_leftovers "${left[@]}"
  fi
  if ((have_state)) && [[ $MODE == netns ]]; then
    if [[ -z $(foreign_cluster) ]]; then
      net_down "$NODES"
    else
      log "warning: another cluster ($(foreign_cluster)) uses the namespaces: left alone"
    fi
  fi
  hosts_remove
  unmount_job_containers
  tmp_view_down
  containers_reset
  requeue_markers_reset
  rm -rf "${DIR:?}/run" "${DIR:?}/spool" "${DIR:?}/tmp" "${DIR:?}/dev" "${DIR:?}/state" \
    "${DIR:?}/munge" "${DIR:?}/jobs" "${DIR:?}/work" "${DIR:?}/cluster.state"
  # Tests take env.sh as "a cluster is up" (and skip without it); configs and logs stay.
  rm -f "${DIR:?}/env.sh"
  # Verify: nothing of ours may survive.
  mapfile -t left < <(leftover_pids)
  if ((${#left[@]})); then
    log "warning: still running: $(describe_pids "${left[@]}")"
    return 1
  fi
}

cmd_down() {
  local t0
  t0=$(now)
  need_root
  if [[ ! -e $DIR/.sddp-cluster ]]; then
    log "nothing to do: no cluster.sh directory at $DIR"
    return 0
  fi
  exec 9>"$DIR/.lock"
  flock -w 120 9 || die "another cluster.sh holds $DIR/.lock"
  cmd_down_locked
  log "down in $(elapsed "$t0") s (logs kept in $DIR/log)"
}

cmd_status() {
  local k pid
  if ! load_state; then
    echo "down (no cluster in $DIR)"
    return 3
  fi
  echo "cluster in $DIR: $MODE mode, $NODES nodes ($(nodelist))"
  printf '  %-10s %s\n' munged "$(pid_from_file "$DIR/munge/munged.pid" || echo 'NOT RUNNING')"
  printf '  %-10s %s\n' slurmctld "$(pid_from_file "$DIR/run/slurmctld.pid" || echo 'NOT RUNNING')"
  for ((k = 1; k <= NODES; k++)); do
    pid=$(pid_from_file "$DIR/run/slurmd-n$k.pid" || echo 'NOT RUNNING')
    printf '  %-10s %s\n' "slurmd n$k" "$pid"
  done
  slurm timeout 5 sinfo -N -o '%10N %12T %8c %10G %E' || echo "  slurmctld does not answer"
  slurm timeout 5 squeue 2>/dev/null || true
  healthy
}

cmd_wait() {
  load_state || die "no cluster in $DIR"
  wait_idle "${1:-$UP_TIMEOUT}"
}

cmd_plugin() {
  (($# >= 1)) || usage
  [[ -d $DIR ]] || die "no cluster in $DIR"
  PLUGIN=$1
  shift
  PLUGIN_ARGS="$*"
  if [[ $PLUGIN != none ]]; then
    PLUGIN=$(realpath -m "$PLUGIN")
    [[ -r $PLUGIN ]] || die "plugin not found: $PLUGIN"
  fi
  write_plugstack
  log "plugstack.conf: $(grep -v '^#' "$DIR/plugstack.conf" | paste -sd';' | grep . || echo '(empty)')"
}

main() {
  local cmd=${1:-}
  (($#)) && shift
  check_knobs "$cmd"
  case $cmd in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    wait) cmd_wait "$@" ;;
    plugin) cmd_plugin "$@" ;;
    pyxis) cmd_pyxis "$@" ;;
    logs) show_logs "${1:-40}" ;;
    *) usage ;;
  esac
}

main "$@"

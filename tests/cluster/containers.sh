# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by cluster.sh: NVIDIA's pyxis (a SPANK plugin) on enroot, on the test cluster's nodes.
#
#   cluster.sh pyxis SO ENROOT ORDER [HOOKS [ARGS...]]   register pyxis (no restart needed)
#   cluster.sh pyxis none                                 remove it
#
# SO is a spank_pyxis.so built for this Slurm, ENROOT an enroot prefix (both from
# scripts/container-kit.sh). ORDER says where its plugstack.conf line goes: `first` (before
# slurm-ddp's, the order docs/admin.md asks for) or `last`. HOOKS: `extra-hooks` also enables
# enroot's optional extra/50-slurm-pmi.sh and extra/50-slurm-pytorch.sh, as many sites do;
# `no-extra-hooks` (the default) only its standard ones. ARGS are pyxis's own plugstack
# arguments (e.g. use_squashfuse=1); runtime_path is set here.
#
# A site's nodes each have their own disk; here they share one machine, so every node gets its own
# enroot folders under $DIR/containers/nodes/nK. pyxis runs `enroot` through slurmstepd's PATH
# (slurmd's, which `up` starts with $DIR/containers/bin first) and hands it no ENROOT_* variable of
# the job: a small wrapper there picks the node's folders by the node's host name (each slurmd has
# its own UTS namespace) and this cluster's enroot configuration ($DIR/containers/enroot, what a
# site keeps in /etc/enroot), then runs the kit's enroot.

containers_dir() { echo "$DIR/containers"; }

# The registration, kept in $DIR so that `cluster.sh plugin` (which rewrites plugstack.conf)
# keeps pyxis where it was put. Sets PYXIS_SO, PYXIS_ORDER, PYXIS_ARGS; false when none.
load_pyxis_state() {
  local f key val
  f="$(containers_dir)/pyxis.state"
  PYXIS_SO="" PYXIS_ORDER="" PYXIS_ARGS=""
  [[ -r $f ]] || return 1
  while IFS='=' read -r key val; do
    case $key in
      PYXIS_SO) PYXIS_SO=$val ;;
      PYXIS_ORDER) PYXIS_ORDER=$val ;;
      PYXIS_ARGS) PYXIS_ARGS=$val ;;
    esac
  done <"$f"
  [[ -n $PYXIS_SO ]]
}

# pyxis's plugstack.conf line, when it is registered in the given place (first|last).
render_pyxis_line() {
  load_pyxis_state || return 0
  [[ $PYXIS_ORDER == "$1" ]] || return 0
  echo "required $PYXIS_SO runtime_path=$(containers_dir)/pyxis${PYXIS_ARGS:+ $PYXIS_ARGS}"
}

# The enroot wrapper on slurmd's PATH (see the top of this file). Paths are fixed when it is
# written; only the node name is looked up when it runs.
render_enroot_wrapper() {
  local enroot=$1 c
  c=$(containers_dir)
  cat <<EOF
#!/bin/sh
# Written by tests/cluster/cluster.sh pyxis: enroot of $enroot, with this node's own folders.
node=\$(hostname)
# enroot runs its helpers (enroot-nsenter, enroot-mount...) from PATH.
export PATH=$enroot/bin:\$PATH
export ENROOT_SYSCONF_PATH=$c/enroot
export ENROOT_RUNTIME_PATH=$c/nodes/\$node/run
export ENROOT_DATA_PATH=$c/nodes/\$node/data
export ENROOT_CACHE_PATH=$c/nodes/\$node/cache
export ENROOT_TEMP_PATH=$c/nodes/\$node/tmp
exec $enroot/bin/enroot "\$@"
EOF
}

# Mounts enroot or a FUSE helper left under $DIR/containers (a killed step), innermost first
# (unmount_below is cluster.sh's).
unmount_containers() { unmount_below "$(containers_dir)"; }

# `up` and `down`: no container outlives its cluster. pyxis names a step's container
# pyxis_<job>.<step> and a new cluster numbers jobs from 1 again, so one a killed step left
# behind would be taken for the next cluster's step of the same number.
containers_reset() {
  unmount_containers
  rm -rf "$(containers_dir)"
}

cmd_pyxis() {
  (($# >= 1)) || usage
  load_state || die "no cluster in $DIR"
  load_plugin_choice
  local so=$1 enroot=${2:-} order=${3:-} hooks=${4:-no-extra-hooks} c k
  c=$(containers_dir)
  if [[ $so == none ]]; then
    rm -f "$c/pyxis.state"
    write_plugstack
    log "plugstack.conf: $(grep -v '^#' "$DIR/plugstack.conf" | paste -sd';' | grep . || echo '(empty)')"
    return 0
  fi
  (($# >= 3)) || usage
  shift 3
  (($# == 0)) || shift
  so=$(realpath -m "$so")
  [[ -r $so ]] || die "pyxis plugin not found: $so (build it with scripts/container-kit.sh pyxis)"
  [[ -x $enroot/bin/enroot ]] ||
    die "no bin/enroot in $enroot (build it with scripts/container-kit.sh enroot)"
  [[ $order == first || $order == last ]] || die "pyxis ORDER must be first or last: $order"
  [[ $hooks == extra-hooks || $hooks == no-extra-hooks ]] ||
    die "pyxis HOOKS must be extra-hooks or no-extra-hooks: $hooks"
  # The site's enroot configuration, rewritten whole each time: hooks come and go with HOOKS.
  rm -rf "${c:?}/enroot" "${c:?}/bin"
  mkdir -p "$c/bin" "$c/pyxis"
  cp -r "$enroot/etc/enroot" "$c/enroot"
  if [[ $hooks == extra-hooks ]]; then
    cp "$enroot/share/enroot/hooks.d/50-slurm-pmi.sh" "$enroot/share/enroot/hooks.d/50-slurm-pytorch.sh" \
      "$c/enroot/hooks.d/"
  fi
  # Unpacked images (pyxis's default: `enroot create` per step) go to memory, as on nodes whose
  # enroot data lives on a local tmpfs: on this machine's disk, deleting one took over 50 s
  # (online discard) and held the step's end for that long.
  mkdir -p "$c/nodes"
  mountpoint -q "$c/nodes" || mount -t tmpfs -o "size=${ENROOT_TMPFS_SIZE:-8g},mode=0755" tmpfs "$c/nodes"
  for ((k = 1; k <= NODES; k++)); do
    mkdir -p "$c/nodes/n$k"
  done
  render_enroot_wrapper "$(realpath "$enroot")" | write_file "$c/bin/enroot"
  chmod 0755 "$c/bin/enroot"
  printf 'PYXIS_SO=%s\nPYXIS_ORDER=%s\nPYXIS_ARGS=%s\n' "$so" "$order" "$*" | write_file "$c/pyxis.state"
  write_plugstack
  log "plugstack.conf ($hooks): $(grep -v '^#' "$DIR/plugstack.conf" | paste -sd';')"
}

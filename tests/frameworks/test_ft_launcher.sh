#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# NVIDIA's ft_launcher (nvidia-resiliency-ext 0.4.1, a torchrun fork) per node under
# `srun --ddp=launcher`. It refuses torchrun's static rendezvous that the plugin selects
# (PET_RDZV_BACKEND=static) and only runs c10d, whose endpoint is not derived from
# --master-addr/--master-port, so the endpoint is passed from PET_MASTER_ADDR:PET_MASTER_PORT.
# The agents meet there; the workers' process group then uses a free port that the rank-0 agent
# picks itself (0.4.1 has no option for it), so that port is reported, not required to be the step's.
source "$(dirname "$0")/stack_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-300}
VENV=$(stack_env torch)
export PATH="$VENV/bin:$PATH"

out=$(srun_t --ddp=launcher,nproc=2 -N2 --ntasks-per-node=1 ft_launcher "$FW_DIR/torch_ddp.py" 2>&1) || true
expect_contains "ft_launcher refuses the plugin's static rendezvous (exact error for the docs)" "$out" \
    "Current ft_launcher version supports only rdzv_backend=c10d. Got static"

out=$(srun_t --ddp=launcher,nproc=2 -N2 --ntasks-per-node=1 bash -c \
    'exec ft_launcher --rdzv-backend=c10d --rdzv-endpoint="$PET_MASTER_ADDR:$PET_MASTER_PORT" "$0"' \
    "$FW_DIR/torch_ddp.py" 2>&1) || true
lines=$(grep '^STACK ' <<<"$out" || true)
problems=$(awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        n++; seen[f["rank"]]++; d[f["weights"]]++
        if (f["world"] != 4) print "rank " f["rank"] ": world=" f["world"]
        if (f["launcher"] != "torchrun") print "rank " f["rank"] ": not started by an elastic agent"
        split(f["ports"], pr, "-")
        if (f["env_addr"] != "n1" || f["env_port"] != pr[1]) print "rank " f["rank"] ": PET_MASTER=" f["env_addr"] ":" f["env_port"] ", block " f["ports"]
        if (f["addr"] != "n1") print "rank " f["rank"] ": process group store on " f["addr"] }
    END { if (n != 4) print n " STACK lines"; for (r = 0; r < 4; r++) if (seen[r] != 1) print "rank " r " seen " seen[r] + 0
          k = 0; for (x in d) k++; if (k != 1) print k " weight digests" }' <<<"$lines")
if [ -n "$lines" ] && [ -z "$problems" ]; then pass "ft_launcher --rdzv-backend=c10d: 4 workers on 2 nodes, identical weights"
else fail "ft_launcher c10d run:"; echo "$problems"; tail -40 <<<"$out"; fi
# Where the agents met: ft_launcher logs its launch config; both agents must name the step's port.
first=$(stack_field ports "$(head -1 <<<"$lines")" | cut -d- -f1)
expect_eq "both agents rendezvoused at n1:<first port of the step's block>" \
    "$(grep -c "rdzv_endpoint *: n1:${first:-none}\$" <<<"$out")" 2
echo "info: workers' process group port: $(stack_field port "$(head -1 <<<"$lines")") (chosen by ft_launcher's rank-0 agent; step block ${first:-?}+)"
finish

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Scale model of the bootstrap: time to hand the 128-byte NCCL id to every rank and to
finish the preflight at 10k and 100k ranks, for

  ours      two-level TCP rendezvous as implemented: node leaders (local rank 0, 8 ranks per node)
            connect to rank 0, paced in batches of half the accept backlog (rendezvous/protocol/join_pacing.hpp);
            locals reach their leader over Unix sockets. The preflight is a gather of the records
            to rank 0 and a broadcast of its verdict (rendezvous/preflight_exchange.hpp).
  ours, allgather  the same join, then a full allgather (sddp_allgather; the preflight of
            launchers that give no node ranks): rank 0 sends the result to every leader (root
            egress = leaders x N x (R+4) bytes);
  ours, tree k  the node leaders in a k-ary tree (rendezvous/protocol/leader_tree.hpp, SLURM_DDP_TREE_FANOUT,
            default 16): rank 0 admits k leaders, every leader admits k more, one level after
            the other; records merge upward level by level; the result is forwarded whole
            (store and forward) down ceil(log_k(leaders)) levels, k copies per leader;
  tcpstore  a single-root TCPStore: every rank connects to rank 0, get()s the id; allgather as
            set(pf/rank), rank 0 get()s all N keys and sets pf/all, everyone get()s pf/all.

No dependencies:
  python3 bench/model/scale_model.py [results.txt] [--out RAW]   (default build-bench/bench/results.txt)
With --out the whole report also goes to RAW, after the raw-file header (bench/lib/raw_header.sh).

Checked against real launches: where the results file also has SRUN lines of
`bench/srun/srun_bench.sh --all` (2 and 32 nodes on one machine), the same local model, laid out
as that step was (N/nodes ranks per node, leaders in the k-ary tree), predicts each TCP point's
init + broadcast and the CPU of all its tasks; the error of each point is printed.

Calibration (from the RESULT lines of bootstrap_bench / tcpstore_bench.py): each rank 0 reports
its own CPU seconds (user + system), i.e. the root's serial work, which is what limits a single
root at scale; and the sum of all ranks' CPU. Linear least squares on the points with N <= 256
gives the per-connection, per-record and per-byte costs; the N = 1024 points are held out and
predicted (out-of-sample validation). On this machine every rank shares the same few cores, so
the local wall-time model is  t = t0 + max(root CPU, all ranks' CPU / cores); at scale ranks run
on their own nodes and only the root's serial work, the network and the accept backlog count.
"""
import argparse
import math
import os
import sys

import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_RESULTS = os.path.join(ROOT, "build-bench", "bench", "results.txt")

ID_BYTES, REC = 128, 64
PF_REC, VERDICT = 60, 9  # a preflight record (step, host, bus id) and an "ok" verdict, bytes
FRAME = 32  # assumed per-frame header + length overhead (bytes)


def load(path, tag="RESULT"):
    """RESULT lines: (impl, n) -> figures; SRUN lines: (impl, nodes, n) -> figures."""
    pts = {}
    for line in open(path):
        if line.startswith(tag + " ") and " ok=0" not in line:
            kv = dict(x.split("=", 1) for x in line.split()[1:])
            key = (kv["impl"], int(kv["n"])) if tag == "RESULT" else (
                kv["impl"], int(kv["nodes"]), int(kv["n"]))
            pts[key] = {k: float(v) for k, v in kv.items() if k not in ("impl",)}
    return pts


class Tee:
    """Everything printed goes to the terminal and to the raw file."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, s):
        for st in self.streams:
            st.write(s)

    def flush(self):
        for st in self.streams:
            st.flush()


def lstsq(rows, ys):
    """Ordinary least squares for a few parameters (normal equations, Gaussian elimination);
    parameters that come out negative are dropped (set to 0) and the rest refitted."""
    k = len(rows[0])
    active = list(range(k))
    while True:
        a = [[sum(r[i] * r[j] for r in rows) for j in active] for i in active]
        b = [sum(r[i] * y for r, y in zip(rows, ys)) for i in active]
        m = len(active)
        for c in range(m):
            p = max(range(c, m), key=lambda i: abs(a[i][c]))
            a[c], a[p], b[c], b[p] = a[p], a[c], b[p], b[c]
            if abs(a[c][c]) < 1e-30:
                a[c][c] = 1e-30
            for i in range(m):
                if i != c:
                    f = a[i][c] / a[c][c]
                    a[i] = [x - f * y for x, y in zip(a[i], a[c])]
                    b[i] -= f * b[c]
        sol = [b[i] / a[i][i] for i in range(m)]
        if all(s >= 0 for s in sol) or len(active) == 1:
            out = [0.0] * k
            for i, s in zip(active, sol):
                out[i] = max(s, 0.0)
            return out
        active = [i for i, s in zip(active, sol) if s >= 0]


# --- layouts of the measured variants -------------------------------------------------------
def pf_children(n):
    """ours-preflight: two-level like ours-2level."""
    return ours_children("ours-2level", n)[0]


BENCH_FANOUT = 4  # bootstrap_bench's --fanout default (ours-tree)
MAC_COST = 4e-6  # one HMAC-SHA256 over a small frame (docs/performance-history.md, libcrypto)


def tree_depth(nodes, k):
    """Links from node 0 to the deepest node of a k-ary heap over `nodes` nodes."""
    depth, deepest = 0, nodes - 1
    while deepest > 0:
        deepest, depth = (deepest - 1) // k, depth + 1
    return depth


def ours_children(impl, n, k=BENCH_FANOUT):
    """Direct children of rank 0 (TCP leaders + its own locals), and bytes rank 0 sends in the
    allgather result (to every direct child)."""
    per = 1 if impl == "ours-flat" else min(8, n)
    nodes = n // per
    leaders = min(k, nodes - 1) if impl == "ours-tree" else nodes - 1
    children = leaders + (per - 1)
    return children, children * n * (REC + 4)


def moved_bytes(impl, n):
    """Allgather result bytes all ranks together send: the star's root egress plus the leaders'
    copies to their locals (about the same again). A tree moves the same bytes, only from more
    senders."""
    if impl == "ours-flat":
        return ours_children(impl, n)[1]
    return ours_children("ours-2level", n)[1] * 2


def calibrate(pts, cores, held_out=1024):
    fit_pts = {k: v for k, v in pts.items() if k[1] < held_out}
    cal = {}
    ours = [(k, v) for k, v in fit_pts.items() if k[0] in ("ours-2level", "ours-flat",
                                                             "ours-tree")]
    if len(ours) >= 3:
        # root CPU for join + broadcast: a + c_conn * direct children
        cal["ours_id"] = lstsq([[1, ours_children(k[0], k[1])[0]] for k, _ in ours],
                               [v["root_cpu_id"] for _, v in ours])
        # root CPU for the allgather: a + c_rec * N + c_byte * result bytes sent
        cal["ours_ag"] = lstsq([[1, k[1], ours_children(k[0], k[1])[1]] for k, _ in ours],
                               [v["root_cpu_ag"] - v["root_cpu_id"] for _, v in ours])
        # all ranks' CPU: a + per-rank + per byte moved (root egress + leaders to their locals)
        cal["ours_total"] = lstsq(
            [[1, k[1], moved_bytes(k[0], k[1])] for k, _ in ours], [v["total_cpu"] for _, v in ours])
        cal["ours_t0"] = {}
        for impl in ("ours-2level", "ours-flat", "ours-tree"):
            res = [v["id_med"] - max(v["root_cpu_id"], v["total_cpu"] / cores)
                   for k, v in fit_pts.items() if k[0] == impl]
            cal["ours_t0"][impl] = max(0.0, sorted(res)[len(res) // 2]) if res else 0.0
    pf = [(k, v) for k, v in fit_pts.items() if k[0] == "ours-preflight"]
    if len(pf) >= 3:
        # root CPU for the preflight: a + c_rec * records decoded and checked + c_send * children
        # the verdict goes to
        cal["ours_pf"] = lstsq([[1, k[1], pf_children(k[1])] for k, _ in pf],
                               [v["root_cpu_ag"] - v["root_cpu_id"] for _, v in pf])
        cal["ours_pf_total"] = lstsq([[1, k[1]] for k, _ in pf], [v["total_cpu"] for _, v in pf])
        res = [v["ag_med"] - max(v["root_cpu_ag"], v["total_cpu"] / cores) for _, v in pf]
        cal["ours_pf_t0"] = max(0.0, sorted(res)[len(res) // 2])
    ts = [(k, v) for k, v in fit_pts.items() if k[0] == "tcpstore-agent"]
    if len(ts) >= 2:
        # store server thread CPU for everything: a + c_client * N
        cal["ts_server"] = lstsq([[1, k[1]] for k, _ in ts], [v["root_cpu_ag"] for _, v in ts])
        cal["ts_total"] = lstsq([[1, k[1]] for k, _ in ts], [v["total_cpu"] for _, v in ts])
        res = [v["id_med"] - max(v["root_cpu_ag"], v["total_cpu"] / cores) for _, v in ts]
        cal["ts_t0"] = max(0.0, sorted(res)[len(res) // 2])
    return cal


def local_prediction(cal, impl, n, cores):
    if impl == "ours-preflight":
        if "ours_pf" not in cal:
            return None, None
        a, c = cal["ours_id"]
        root = a + c * pf_children(n)
        pa, pr, ps = cal["ours_pf"]
        root += pa + pr * n + ps * pf_children(n)
        ta, tn = cal["ours_pf_total"]
        return None, cal["ours_pf_t0"] + max(root, (ta + tn * n) / cores)
    if impl.startswith("ours"):
        ch, egress = ours_children(impl, n)
        a, c = cal["ours_id"]
        root_id = a + c * ch
        a2, r2, b2 = cal["ours_ag"]
        root_ag = root_id + a2 + r2 * n + b2 * egress
        ta, tn, tb = cal["ours_total"]
        total = ta + tn * n + tb * moved_bytes(impl, n)
        t0 = cal["ours_t0"][impl]
        # the id phase is roughly all of the total CPU except the allgather's bytes
        total_id = ta + tn * n
        return t0 + max(root_id, total_id / cores), t0 + max(root_ag, total / cores)
    a, c = cal["ts_server"]
    ta, tn = cal["ts_total"]
    t = cal["ts_t0"] + max(a + c * n, (ta + tn * n) / cores)
    return None, t


def srun_prediction(cal, n, nodes, cores, k=16):
    """init + broadcast of a real `srun --ddp` over TCP on this machine: the local model with the
    step's layout (n / nodes ranks per node, the node leaders in a k-ary tree); and the CPU of
    all tasks it assumes."""
    per = max(1, n // nodes)
    children = min(k, nodes - 1) + (per - 1)
    a, c = cal["ours_id"]
    pa, pr, ps = cal["ours_pf"]
    root = a + c * children + pa + pr * n + ps * children
    ta, tn = cal["ours_pf_total"]
    total = ta + tn * n
    return cal["ours_pf_t0"] + max(root, total / cores), total


# --- the model at scale ---------------------------------------------------------------------
def admission(clients, c_conn, backlog, rto=1.0):
    """Time for one root to admit `clients` connections arriving at once, serially at c_conn
    each, with an accept queue of `backlog`: SYNs beyond it are dropped and retransmitted by the
    client's TCP after 1 s, 3 s, 7 s, ... (exponential RTO)."""
    t, waiting, queue, retry, tries = 0.0, clients, 0.0, rto, 0
    while True:
        admitted_now = min(waiting, backlog - queue)
        queue += admitted_now
        waiting -= admitted_now
        if waiting <= 0:
            return t + queue * c_conn
        # drain until the next retransmission epoch
        drained = min(queue, retry / c_conn)
        queue -= drained
        t += retry
        tries += 1
        retry = rto * (2 ** tries)
        if tries > 8:
            return float("inf")


ADMIT_PACE = 100e-6  # rendezvous/protocol/join_pacing.hpp kAdmitCost


def admission_paced(clients, c_conn, backlog, pace=ADMIT_PACE, rto=1.0):
    """As admission(), but clients arrive as rendezvous/protocol/join_pacing.hpp sends them: batches of
    backlog/2, batch i at i * batch * pace. Dropped SYNs (if rank 0 admits slower than the pace)
    retry after 1 s, 3 s, ..."""
    batch = max(backlog // 2, 16)
    events = [(i * pace, min(batch, clients - i)) for i in range(0, clients, batch)]
    t, queue, retry_at = 0.0, 0.0, []
    for when, k in events + [(float("inf"), 0)]:
        # drain until the next arrival, serving retransmissions as they come due
        while True:
            due = [r for r in retry_at if r[0] <= when]
            if queue > 0:
                finish = t + queue * c_conn
                nxt = min([when] + [r[0] for r in due])
                if finish <= nxt:
                    t, queue = finish, 0.0
                else:
                    queue -= (nxt - t) / c_conn
                    t = nxt
            if not due:
                break
            r = min(due)
            retry_at.remove(r)
            t = max(t, r[0])
            take = min(r[1], backlog - queue)
            queue += take
            if r[1] > take:
                if r[2] > 8:
                    return float("inf")
                retry_at.append((r[0] + rto * 2 ** r[2], r[1] - take, r[2] + 1))
        if when == float("inf"):
            return t if not retry_at else float("inf")
        t = max(t, when)
        take = min(k, backlog - queue)
        queue += take
        if k > take:
            retry_at.append((when + rto, k - take, 1))


def model_ours(n, cal, a, tree_k=None, preflight=False):
    per = a.ranks_per_node
    leaders = max(1, n // per)
    _, c_conn = cal["ours_id"]
    _, c_rec, c_byte = cal["ours_ag"]
    rtt, bw = a.rtt, a.bandwidth
    # join: 1.5 RTT handshake per level (TCP to rank 0, Unix to the leader ~ free) + admission
    # of every leader at rank 0 (paced; plus its own 7 locals) + a `joined` message up
    join = 1.5 * rtt + 0.5 * rtt + admission_paced(leaders, c_conn, a.backlog)
    # broadcast from rank 0: one pass down (the per-connection send is inside c_conn); bytes
    bcast = 0.5 * rtt + leaders * (ID_BYTES + FRAME) / bw + (per - 1) * (ID_BYTES + FRAME) / a.local_bw
    t_id = join + bcast
    s = n * (REC + 4)  # result bytes
    up = 0.5 * rtt + c_rec * n + s / bw  # records merge upward, root ingress
    if preflight:
        _, p_rec, p_send = cal["ours_pf"]
        up = 0.5 * rtt + p_rec * n + n * (PF_REC + 4) / bw  # decode + check every record
        verdict = 0.5 * rtt + p_send * leaders + leaders * (VERDICT + FRAME) / bw
        return t_id, t_id + up + verdict, "root ingress %.3g MB, verdict to %d leaders" % (
            n * (PF_REC + 4) / 1e6, leaders)
    if tree_k is None:
        egress = leaders * s
        down = 0.5 * rtt + max(egress / bw, c_byte * egress) + (per - 1) * s / a.local_bw
        note = "root egress %.3g GB" % (egress / 1e9)
    else:
        depth = max(1, math.ceil(math.log(leaders, tree_k))) if leaders > 1 else 1
        per_level = tree_k * s
        down = depth * (0.5 * rtt + max(per_level / bw, c_byte * per_level)) + (per - 1) * s / a.local_bw
        note = "tree k=%d depth %d, %.3g MB per hop" % (tree_k, depth, per_level / 1e6)
    return t_id, t_id + up + down, note


def model_ours_tree(n, cal, a, k):
    """The leaders' k-ary tree as implemented: id, id + preflight, id + preflight + allgather."""
    per = a.ranks_per_node
    leaders = max(1, n // per)
    depth = max(1, tree_depth(leaders, k))
    kids = min(k, leaders - 1) + (per - 1)  # TCP children + own locals, per leader
    _, c_conn = cal["ours_id"]
    _, c_rec, c_byte = cal["ours_ag"]
    _, p_rec, p_send = cal["ours_pf"]
    rtt, bw, lbw = a.rtt, a.bandwidth, a.local_bw
    # join: a leader is served once its parent has joined (level by level: 1.5 RTT + the
    # parent admits its k children); then "subtree complete" climbs back, half an RTT a level
    # rank 0 also checks one MAC'd `joined` frame per rank of the world (leaders report each
    # rank as it joins, and middle leaders pass the frames on): MAC_COST each
    join = depth * (1.5 * rtt + kids * c_conn) + depth * 0.5 * rtt + 1.5 * rtt + n * MAC_COST
    bcast = depth * (0.5 * rtt + kids * (ID_BYTES + FRAME) / bw) + (per - 1) * (ID_BYTES + FRAME) / lbw
    t_id = join + bcast
    # records merge level by level (every leader decodes its subtree's records and re-encodes
    # them): on the critical path n * k/(k-1) records, the root's ingress bytes, depth hops
    merge = k / (k - 1.0)
    pf = (depth * 0.5 * rtt + p_rec * n * merge + n * (PF_REC + 4) / bw
          + depth * (0.5 * rtt + p_send * kids))
    s = n * (REC + 4)
    up = depth * 0.5 * rtt + c_rec * n * merge + s / bw
    hop = k * s
    down = depth * (0.5 * rtt + s / bw + max(hop / bw, c_byte * hop)) + (per - 1) * s / lbw
    note = "k=%d depth %d, %.3g MB to each of k children per hop" % (k, depth, s / 1e6)
    return t_id, t_id + pf, t_id + pf + up + down, note


def model_tcpstore(n, cal, a):
    rtt, bw = a.rtt, a.bandwidth
    _, c_client = cal["ts_server"]
    # per-rank server work: connect + add(init) + get(id) | set(pf) + get(pf/all) + rank 0's get
    # of that rank's record: assume equal cost per request, 3 of 6 before the id is everywhere
    c_id = c_client * 3 / 6
    t_id = 1.5 * rtt + admission(n, c_client / 6, a.backlog) + n * (c_id - c_client / 6) + 2 * rtt
    s = n * REC
    egress = n * s  # pf/all to every rank
    t_ag = t_id + n * c_client * 3 / 6 + 3 * rtt + max(egress / bw, cal["ours_ag"][2] * egress)
    return t_id, t_ag, "root holds %d sockets, egress %.3g GB" % (n, egress / 1e9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="?", default=DEFAULT_RESULTS)
    ap.add_argument("--rtt", type=float, default=100e-6, help="network RTT, s (default 100 us)")
    ap.add_argument("--bandwidth", type=float, default=12.5e9,
                    help="root NIC bandwidth, B/s (default 12.5e9 = 100 Gb/s)")
    ap.add_argument("--local-bw", type=float, default=5e9,
                    help="Unix-socket bandwidth leader -> locals, B/s (default 5e9)")
    ap.add_argument("--backlog", type=int, default=4096,
                    help="accept queue (net.core.somaxconn caps our listen(65535)); default 4096")
    ap.add_argument("--ranks-per-node", type=int, default=8)
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 2,
                    help="cores of the machine that produced the results")
    ap.add_argument("--goal", type=float, default=5.0, help="seconds")
    ap.add_argument("--tree-goal", type=float, default=2.0,
                    help="seconds for id + preflight + 64 B allgather via the tree at 100k")
    ap.add_argument("--fanout", type=int, default=16, help="tree fanout to model (default 16)")
    ap.add_argument("--out", help="also write the report to this raw file, after its header")
    a = ap.parse_args()
    if a.out:
        cmd = "python3 bench/model/scale_model.py " + " ".join(sys.argv[1:])
        header = subprocess.run(["bash", os.path.join(ROOT, "bench", "lib", "raw_header.sh"), cmd],
                                capture_output=True, text=True, check=True).stdout
        raw = open(a.out, "w")
        raw.write(header)
        sys.stdout = Tee(sys.__stdout__, raw)
    pts = load(a.results)
    sruns = load(a.results, "SRUN")
    cal = calibrate(pts, a.cores)
    if "ours_id" not in cal or "ours_pf" not in cal:
        sys.exit("not enough measured points in %s (need ours-2level/ours-flat, ours-preflight "
                 "at N <= 256; tcpstore-agent for the TCPStore rows)" % a.results)
    has_ts = "ts_server" in cal
    print("Calibrated on N <= 256 (rank 0's own CPU time, %d cores):" % a.cores)
    print("  ours   root per direct child (accept, 2 HMACs, hello/welcome, joined, id send): "
          "%.1f us" % (cal["ours_id"][1] * 1e6))
    print("  ours   root allgather: %.2f us per record merged, %.3f ns per result byte sent "
          "(= %.2f GB/s of one core)" % (cal["ours_ag"][1] * 1e6, cal["ours_ag"][2] * 1e9,
                                         1e-9 / cal["ours_ag"][2] if cal["ours_ag"][2] else
                                         float("inf")))
    print("  ours   root preflight: %.2f us per record decoded and checked, %.1f us per verdict "
          "sent to a child" % (cal["ours_pf"][1] * 1e6, cal["ours_pf"][2] * 1e6))
    if has_ts:
        print("  ts     store server per client (6 requests incl. connect): %.1f us"
              % (cal["ts_server"][1] * 1e6))
    print("Assumptions: RTT %.0f us, root NIC %.1f Gb/s, Unix sockets %.1f GB/s, accept backlog "
          "%d (SYNs beyond it retransmitted after 1 s, 3 s, ...; ours paces leaders at %d us "
          "each beyond the first backlog/2), %d ranks per node, frame "
          "overhead %d B, all ranks start together, no other load on rank 0's node."
          % (a.rtt * 1e6, a.bandwidth * 8 / 1e9, a.local_bw / 1e9, a.backlog,
             ADMIT_PACE * 1e6, a.ranks_per_node, FRAME))
    print()
    print("Validation on this machine (wall time, ms; N = 1024 is held out of the fit):")
    print("%-15s %6s  %10s %10s  %10s %10s" % ("impl", "N", "id meas", "id pred", "2nd meas",
                                                  "2nd pred"))
    for (impl, n), v in sorted(pts.items()):
        if impl not in ("ours-2level", "ours-tree", "ours-preflight", "ours-flat",
                        "tcpstore-agent") or (impl == "tcpstore-agent" and not has_ts):
            continue
        pid, pag = local_prediction(cal, impl, n, a.cores)
        print("%-15s %6d  %10.1f %10s  %10.1f %10s%s" % (
            impl, n, v["id_med"] * 1e3, "-" if pid is None else "%.1f" % (pid * 1e3),
            v["ag_med"] * 1e3, "-" if pag is None else "%.1f" % (pag * 1e3),
            "   (held out)" if n >= 1024 else ""))
    tcp = sorted((key, v) for key, v in sruns.items() if key[0] == "srun-tcp")
    if tcp:
        print()
        print("Checked against real srun --ddp over TCP on this machine (same file; the local model "
              "laid out as the step: N/nodes ranks per node, leaders' tree k=%d). Error = "
              "(predicted - measured) / measured:" % a.fanout)
        print("%6s %6s  %10s %10s %7s  %12s %12s %7s" % (
            "nodes", "N", "id meas", "id pred", "error", "CPU meas, s", "CPU pred, s", "error"))
        for (_, nodes, n), v in tcp:
            pred, cpu = srun_prediction(cal, n, nodes, a.cores, a.fanout)
            print("%6d %6d  %10.1f %10.1f %+6.0f%%  %12.3f %12.3f %+6.0f%%" % (
                nodes, n, v["id_med"] * 1e3, pred * 1e3, (pred / v["id_med"] - 1) * 100,
                v["cpu_id"], cpu, (cpu / v["cpu_id"] - 1) * 100 if v["cpu_id"] else float("nan")))
        print("(id: ms from the common start to the last rank holding the id, medians; the model "
              "has no Slurm launch, slurmstepd or scheduler contention, and the network terms "
              "of the at-scale model cannot be checked on one machine)")
    print()
    print("Predictions at scale (seconds; goal: id + preflight under %.0f s at 100k ranks):"
          % a.goal)
    print("%-34s %8s  %9s %9s  %s" % ("design (2nd = second exchange)", "N", "id", "id+2nd",
                                      "notes"))
    verdict = {}
    for n in (1024, 10_000, 100_000):
        rows = [("ours: id + preflight (as shipped)", model_ours(n, cal, a, preflight=True)),
                ("ours: id + sddp_allgather", model_ours(n, cal, a)),
                ] + ([("TCPStore: id + allgather", model_tcpstore(n, cal, a))] if has_ts else [])
        tid, tpf, tall, tnote = model_ours_tree(n, cal, a, a.fanout)
        rows.append(("ours tree k=%d: id + preflight" % a.fanout, (tid, tpf, tnote)))
        rows.append(("ours tree k=%d: id + pf + allgather" % a.fanout, (tid, tall, tnote)))
        for name, (ti, tg, note) in rows:
            print("%-34s %8d  %9.3f %9.3f  %s" % (name, n, ti, tg, note))
            if n == 100_000 and "allgather" not in name.split(":")[0]:
                verdict[name] = (ti, tg)
    print()
    tid, tpf, tall, _ = model_ours_tree(100_000, cal, a, a.fanout)
    print("ours tree k=%d at 100k: id + preflight + 64 B allgather %.2f s -> %s" % (
        a.fanout, tall, "under the %.0f s goal" % a.tree_goal if tall < a.tree_goal
        else "OVER the %.0f s goal" % a.tree_goal))
    for name, (ti, tg) in verdict.items():
        print("%s at 100k: id %.2f s (%s), id + 2nd %.2f s -> %s" % (
            name, ti, "under" if ti < a.goal else "OVER", tg,
            "under the %.0f s goal" % a.goal if tg < a.goal else "OVER the %.0f s goal" % a.goal))


if __name__ == "__main__":
    main()

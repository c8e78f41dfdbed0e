#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch TCPStore doing the rendezvous job the way PyTorch distributes the NCCL id.

Run with a Python that has torch: bench/run.sh uses the pinned torch 2.15 environment
(scripts/framework-env.sh torch); /usr/bin/python3 has Debian's 1.13.

Same method as bench/harness/bootstrap_bench.cpp: `import torch` happens once in the parent, which then
forks N children; each reports ready and blocks on a start pipe; the parent reads CLOCK_MONOTONIC
(time.monotonic) as the common start and closes the pipe. Each child then does what
init_process_group(init_method="env://") + the NCCL id exchange do:

    store = torch.distributed.TCPStore("127.0.0.1", port, N, is_master=(rank == 0))
    rank 0: store.set("nccl_id", <128 bytes>)   others: store.get("nccl_id")     -> "id" time
    preflight-like allgather of 64 bytes, done the efficient way over one store: every rank
    sets "pf/<rank>"; rank 0 gets all N keys and sets "pf/all"; others get "pf/all" -> "allgather"

Variants:
  tcpstore        every rank (rank 0 = master, serving the store) constructs its TCPStore at the
                  start, as with init_process_group(env://). Clients that arrive before the master
                  listens are refused and retry on c10d's own schedule.
  tcpstore-agent  the store server already listens before the start (created in the parent before
                  the fork, as torchrun's agent store does); all N ranks are clients.

Name resolution, made what a well-set-up site has: c10d's client resolves the master address
with AF_INET6 + AI_V4MAPPED, so "127.0.0.1" becomes ::ffff:127.0.0.1, and every connect attempt
(retries included) builds a SocketImpl whose constructor formats the peer with getnameinfo()
without NI_NUMERICHOST: a reverse look-up, made before the connect. glibc answers it from
/etc/hosts only for an exact line, and this machine's hosts file has no ::1 or ::ffff:127.0.0.1
line, so each look-up went to the DNS server, which here often answers late or not at all
(EAI_AGAIN after its 5 s timeout, "The hostname of the client socket cannot be retrieved.
err=-3" in the log): 5-11 s per run at N = 64, a cost of this VM, not of TCPStore. A site answers
those look-ups at once (hosts lines for its own addresses, PTR records for its nodes). So before
importing torch the script checks that the three loopback addresses resolve from /etc/hosts and,
where they do not, re-executes itself in a private mount namespace (unshare -m, root) over a copy
of /etc/hosts with the missing lines added; the machine's own file is not touched. It prints
which lines it added and how long a look-up took; without root it runs as before and says that
look-ups go to DNS. TORCH_* / USE_LIBUV are left at torch 2.15's defaults (libuv server).

Prints the same table and RESULT lines as bootstrap_bench.
"""
import argparse
import datetime
import mmap
import os
import resource
import shutil
import signal
import socket
import statistics
import struct
import sys
import threading
import tempfile
import time

# The addresses c10d reverse-resolves here (see the module comment) and the names a site's
# /etc/hosts gives them.
LOOPBACK_NAMES = (("127.0.0.1", "localhost"), ("::1", "localhost ip6-localhost ip6-loopback"),
                  ("::ffff:127.0.0.1", "localhost"))
HOSTS_ENV = "SDDP_TCPSTORE_HOSTS_ADDED"  # set in the re-executed process: the lines it added


def reverse_lookup(addr):
    """(name or None, seconds) for the reverse look-up c10d makes of `addr`."""
    t = time.monotonic()
    try:
        name = socket.getnameinfo((addr, 0), socket.NI_NAMEREQD)[0]
    except OSError:
        name = None
    return name, time.monotonic() - t


def unresolved_loopback():
    """The LOOPBACK_NAMES lines /etc/hosts lacks (glibc consults it before DNS)."""
    listed = set()
    with open("/etc/hosts") as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if fields:
                listed.add(fields[0])
    return [(a, names) for a, names in LOOPBACK_NAMES if a not in listed]


def answer_reverse_lookups_locally():
    """Re-executes this script where /etc/hosts answers every LOOPBACK_NAMES look-up."""
    if os.environ.get(HOSTS_ENV) is not None:
        return
    missing = unresolved_loopback()
    if not missing:
        os.environ[HOSTS_ENV] = ""
        return
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("# tcpstore_bench: WARNING: /etc/hosts lacks %s and this is not root: c10d's "
              "reverse look-ups of them go to DNS, and a slow DNS server inflates TCPStore's "
              "times" % ", ".join(a for a, _ in missing))
        os.environ[HOSTS_ENV] = "none (not root)"
        return
    fd, path = tempfile.mkstemp(prefix="sddp-tcpstore-hosts.")
    with os.fdopen(fd, "w") as out, open("/etc/hosts") as src:
        out.write(src.read().rstrip("\n") + "\n")
        for addr, names in missing:
            out.write("%s %s\n" % (addr, names))
    os.environ[HOSTS_ENV] = ", ".join("%s %s" % m for m in missing)
    # The bind mount keeps the copy's inode; its name can go at once.
    os.execvp("unshare", ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                          'mount --bind "$0" /etc/hosts && rm -f "$0" && exec "$@"', path,
                          sys.executable] + sys.argv)


answer_reverse_lookups_locally()

import torch  # noqa: E402,F401  (imported before the fork on purpose)
import torch.distributed as dist  # noqa: E402

ID = bytes((i * 131 + 7) & 0xFF for i in range(128))
SLOT = struct.Struct("=idddd")  # state (1 ok, 2 failed), t_id, t_ag, cpu at t_id, cpu at t_ag


def rec(rank):
    return bytes((rank * 31 + i * 17 + 3) & 0xFF for i in range(64))


def cpu_s():
    ru = resource.getrusage(resource.RUSAGE_SELF)  # this process only (reset by fork)
    return ru.ru_utime + ru.ru_stime


def thread_cpu_s(exclude):
    """CPU seconds of this process's threads other than `exclude` (the store server thread)."""
    tot = 0
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == exclude:
            continue
        with open("/proc/self/task/%s/stat" % tid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        tot += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
    return tot / os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def child(rank, n, port, agent, shm, ready, go_r, end_r):
    ready[rank] = 1
    os.read(go_r, 1)  # EOF = go
    state = 2
    t_id = t_ag = c_id = c_ag = 0.0
    try:
        store = dist.TCPStore("127.0.0.1", port, n, (rank == 0 and not agent),
                              datetime.timedelta(seconds=120), wait_for_workers=not agent)
        if rank == 0:
            store.set("nccl_id", ID)
            got = ID
        else:
            got = store.get("nccl_id")
        t_id = time.monotonic()
        c_id = cpu_s()
        assert got == ID, "wrong id"
        store.set("pf/%d" % rank, rec(rank))
        if rank == 0:
            table = b"".join(store.get("pf/%d" % r) for r in range(n))
            store.set("pf/all", table)
        else:
            table = store.get("pf/all")
        t_ag = time.monotonic()
        c_ag = cpu_s()
        assert len(table) == 64 * n and table[64 * (n - 1):] == rec(n - 1), "wrong table"
        state = 1
    except Exception as e:  # noqa: BLE001
        sys.stderr.write("rank %d: %s\n" % (rank, e))
    SLOT.pack_into(shm, rank * SLOT.size, state, t_id, t_ag, c_id, c_ag)
    os.read(end_r, 1)  # keep the store (rank 0 serves it) alive until everyone is done
    os._exit(0)


def run_once(n, agent, limit_s):
    port = free_port()
    shm = mmap.mmap(-1, SLOT.size * n)
    ready = mmap.mmap(-1, n)
    go_r, go_w = os.pipe()
    end_r, end_w = os.pipe()
    server = None
    if agent:
        server = dist.TCPStore("127.0.0.1", port, n, True, datetime.timedelta(seconds=120),
                               wait_for_workers=False)
    server_cpu0 = thread_cpu_s(threading.get_native_id()) if agent else 0.0
    pids = []
    for r in range(n):
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            os.close(end_w)
            try:
                child(r, n, port, agent, shm, ready, go_r, end_r)
            finally:
                os._exit(1)
        pids.append(pid)
    while sum(ready[:]) < n:
        time.sleep(0.0002)
    time.sleep(0.002)
    start = time.monotonic()
    os.close(go_w)
    os.close(go_r)
    os.close(end_r)
    deadline = start + limit_s
    while True:
        states = [SLOT.unpack_from(shm, r * SLOT.size)[0] for r in range(n)]
        if all(s != 0 for s in states) or time.monotonic() > deadline:
            break
        time.sleep(0.001)
    server_cpu = thread_cpu_s(threading.get_native_id()) - server_cpu0 if agent else 0.0
    os.close(end_w)
    ok, t_id, t_ag, why, total = True, 0.0, 0.0, "", server_cpu
    for r in range(n):
        st, a, b, ca, cb = SLOT.unpack_from(shm, r * SLOT.size)
        if r == 0:
            root = (ca, cb) if not agent else (-1.0, server_cpu)
        total += cb
        if st != 1:
            ok = False
            why = why or "rank %d %s" % (r, "failed" if st == 2 else "did not report in time")
            continue
        t_id, t_ag = max(t_id, a - start), max(t_ag, b - start)
    reap = time.monotonic() + 10
    for p in pids:
        while True:
            w, _ = os.waitpid(p, os.WNOHANG)
            if w == p:
                break
            if time.monotonic() > reap:
                os.kill(p, signal.SIGKILL)
                os.waitpid(p, 0)
                break
            time.sleep(0.001)
    del server
    return ok, t_id, t_ag, why, root + (total,)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default="tcpstore,tcpstore-agent")
    ap.add_argument("--ns", default="2,8,64,256,1024")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--reps-large", type=int, default=3)
    ap.add_argument("--timeout-ms", type=float, default=180000)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print("# tcpstore_bench: torch %s, RLIMIT_NOFILE=%d, %d CPUs" % (torch.__version__, hard,
                                                                     os.cpu_count()))
    looked = [(a,) + reverse_lookup(a) for a, _ in LOOPBACK_NAMES]
    print("# tcpstore_bench: reverse look-ups (c10d makes one per connect): %s; lines added to "
          "/etc/hosts in a private mount namespace: %s" % (
              ", ".join("%s -> %s in %.0f us" % (a, n or "FAILED", t * 1e6) for a, n, t in looked),
              os.environ.get(HOSTS_ENV) or "none needed"))
    print("%-12s %6s %4s  %-28s %-28s" % ("impl", "N", "ok", "id: median (min-max) ms",
                                          "allgather: median (min-max) ms"))
    sys.stdout.flush()
    failures = 0
    for v in a.variants.split(","):
        for n in [int(x) for x in a.ns.split(",")]:
            reps = min(a.reps, a.reps_large) if n >= 1024 else a.reps
            ids, ags, cids, cags, tcpu, why = [], [], [], [], [], ""
            for _ in range(reps):
                ok, ti, tg, w, root = run_once(n, v == "tcpstore-agent", a.timeout_ms / 1000)
                if ok:
                    ids.append(ti)
                    ags.append(tg)
                    cids.append(root[0])
                    cags.append(root[1])
                    tcpu.append(root[2])
                else:
                    failures += 1
                    why = w
                    sys.stderr.write("%s N=%d failed: %s\n" % (v, n, w))
                time.sleep(0.05)
            if not ids:
                print("%-12s %6d 0/%d  FAILED: %s" % (v, n, reps, why))
                print("RESULT impl=%s n=%d reps=%d ok=0" % (v, n, reps))
                sys.stdout.flush()
                continue
            med_i, med_a = statistics.median(ids), statistics.median(ags)
            print("%-12s %6d %d/%d  %-28s %-28s" % (
                v, n, len(ids), reps,
                "%.2f (%.2f-%.2f)" % (med_i * 1e3, min(ids) * 1e3, max(ids) * 1e3),
                "%.2f (%.2f-%.2f)" % (med_a * 1e3, min(ags) * 1e3, max(ags) * 1e3)))
            print("RESULT impl=%s n=%d reps=%d ok=%d id_med=%.6f id_min=%.6f id_max=%.6f "
                  "ag_med=%.6f ag_min=%.6f ag_max=%.6f root_cpu_id=%.6f root_cpu_ag=%.6f total_cpu=%.6f" % (
                      v, n, reps, len(ids), med_i, min(ids), max(ids), med_a, min(ags), max(ags),
                      statistics.median(cids), statistics.median(cags),
                      statistics.median(tcpu)))
            sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

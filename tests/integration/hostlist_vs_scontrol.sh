#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Differential test of our host list expansion against Slurm's own, `scontrol show hostnames`.
#
# Usage: hostlist_vs_scontrol.sh EXPANDER [CASES] [SEED]
#   EXPANDER is run as `EXPANDER hostnames LIST` and must print one host per line and exit 0, or
#   exit non-zero to reject LIST (the `slurm-ddp hostnames` CLI). CASES defaults to 2000.
# Exit status: 0 agreement, 1 a difference, 2 usage, 77 skipped (no scontrol or python3).
#
# scontrol needs no daemon for `show hostnames`, but it does load slurm.conf first: without one
# (and without a DNS SRV record for configless Slurm) it dies with "Could not establish a
# configuration source", and with SLURM_CONF naming a missing file it retries for 60 s. The
# machine's own config is used when it works; otherwise a two-line config in a temp dir.
# scontrol exits 0 even for a rejected list; rejection shows as "Invalid hostlist" on stderr.
#
# Lists both accept must expand to the same hosts in the same order. Deliberate differences, each
# recognised from the input below and counted in the summary rather than failed:
#   we reject what Slurm accepts: empty elements ("a,,b", "a,"), unbalanced or nested brackets
#     (Slurm 22.05 turns "n[1-3" into "n]"), whitespace or a sign inside brackets (Slurm pads
#     "n[ 1]" to "n01"), "N-" without a high bound, junk after a low bound, numbers above 2^64-1
#     (Slurm clamps them), names over 255 characters, control or non-ASCII bytes, and bad ranges
#     in an inner group of three or more (Slurm silently drops those hosts);
#   we accept what Slurm rejects: text after the last bracket ("n[1-2]-ib", Slurm >= 23.02.5
#     accepts it too) and single ranges over 65536 hosts (our limit is on the total, 2^20);
#   newlines separate elements as in Slurm >= 23.02 (older Slurm keeps them inside names).
set -u

expander=${1:-}
cases=${2:-2000}
seed=${3:-20240611}
if [[ -z "$expander" || ! -x "$expander" ]]; then
    echo "usage: $0 EXPANDER [CASES] [SEED]   (EXPANDER must be executable)" >&2
    exit 2
fi
if ! command -v scontrol >/dev/null 2>&1; then
    echo "SKIP: scontrol not found (apt-get install slurm-client)"
    exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found"
    exit 77
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

probe_ok() {
    [[ "$(timeout 10 scontrol show hostnames 'probe[1-2]' 2>/dev/null)" == $'probe1\nprobe2' ]]
}
if ! probe_ok; then
    printf 'ClusterName=sddp-hostlist-test\nSlurmctldHost=localhost\n' >"$tmp/slurm.conf"
    export SLURM_CONF="$tmp/slurm.conf"
    if ! probe_ok; then
        echo "SKIP: scontrol show hostnames does not work even with a minimal slurm.conf"
        timeout 10 scontrol show hostnames 'probe[1-2]'
        exit 77
    fi
fi

python3 - "$expander" "$cases" "$seed" <<'PYTHON'
import concurrent.futures
import os
import random
import re
import subprocess
import sys

expander, n_cases, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
U64_MAX = 2**64 - 1
SPACE = " \t\n"

version_text = subprocess.run(["scontrol", "--version"], capture_output=True, text=True).stdout
m = re.search(r"(\d+)\.(\d+)\.(\d+)", version_text)
slurm_version = tuple(int(x) for x in m.groups()) if m else (0, 0, 0)
# Newline as a separator arrived in Slurm 23.02.0, text after the last bracket group
# ("n[1-2]-ib") in 23.02.5; we follow current Slurm.
slurm_splits_newlines = slurm_version >= (23, 2, 0)
slurm_has_suffix = slurm_version >= (23, 2, 5)
NEWLINE = ["\n"] if slurm_splits_newlines else []


# ---- generator -------------------------------------------------------------------------------
def word(allow_empty=False):
    if allow_empty and rng.random() < 0.1:
        return ""
    first = rng.choice("abcnxyz")
    rest = "".join(rng.choice("abcdnxz0123456789-._") for _ in range(rng.randrange(0, 6)))
    return (first + rest).rstrip("0123456789") or first


def joiner():
    return rng.choice(["-", ".", "_", "x", "-node", "", "r"])


def group(max_hosts):
    texts, count = [], 0
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 5])):
        width = rng.choice([1, 1, 1, 2, 3, 4])
        lo = rng.randrange(0, 10 ** rng.choice([1, 1, 2, 2, 3, 4]))
        lo_text = str(lo).zfill(width)
        if rng.random() < 0.3:
            texts.append(lo_text)
            count += 1
            continue
        hi = lo + rng.randrange(0, rng.choice([3, 10, 40]))
        if count + hi - lo + 1 > max_hosts:
            hi = lo
        hi_text = str(hi) if rng.random() < 0.7 else str(hi).zfill(rng.choice([width, len(str(hi)) + 1]))
        texts.append(lo_text + "-" + hi_text)
        count += hi - lo + 1
    return "[" + ",".join(texts) + "]", count


def element():
    kind = rng.random()
    if kind < 0.2:  # a literal host, maybe with a (padded) number
        digits = "" if rng.random() < 0.3 else str(rng.randrange(0, 200)).zfill(rng.choice([1, 1, 3]))
        return word() + digits, 1
    text, total = word(allow_empty=True), 1
    for g in range(1 if kind < 0.65 else rng.choice([2, 2, 3, 4])):
        if g:
            text += joiner()
        gtext, n = group(max(1, 400 // total))
        text += gtext
        total *= n
    if rng.random() < 0.12:
        text += rng.choice(["-ib", ".cluster", "-eth0", "a"])
    return text, total


def valid_list():
    parts, total = [], 0
    for _ in range(rng.choice([1, 1, 2, 3, 5])):
        e, n = element()
        if total + n > 3000:
            break
        parts.append(e)
        total += n
    if not parts:
        parts.append(element()[0])
    out = parts[0]
    for p in parts[1:]:
        out += rng.choice([",", ",", ",", ",", ", ", " ", "\t", " , "] + NEWLINE) + p
    if rng.random() < 0.05:
        out = rng.choice([" "] + NEWLINE) + out + rng.choice([" ", "\t", ""] + NEWLINE)
    return out


def mutate(s):
    op = rng.randrange(7)
    i = rng.randrange(len(s) + 1)
    if op == 0 and s:
        return s[: min(i, len(s) - 1)] + s[min(i, len(s) - 1) + 1 :]
    if op == 1:
        return s[:i] + rng.choice("[]-,x+ 0a9.") + s[i:]
    if op == 2:
        return s[:i] + ",," + s[i:]
    if op == 3:
        return re.sub(r"(\d+)-(\d+)", lambda m: m.group(2) + "-" + m.group(1), s, count=1)
    if op == 4:
        return s[:i]
    if op == 5:
        return s.replace("]", "", 1) if rng.random() < 0.5 else s.replace("[", "", 1)
    return s + rng.choice([",", "-", "[", "]", "[]", "[1-]", "[-1]", "[a]", "[ 1]"])


EDGE_CASES = [
    "n[1-3,7]", "gpu[008-011]", "n[8-011]", "rack[1-2]-node[01-02]", "a[1-2]b[1-2]c[1-2]",
    "a[1-2]b[1-2]c[1-2]d[1-2]", "n[1-2]-ib", "a1,b[2-3],c", "node-1.cluster", "a, b", " a b ",
    "a,,b", "a,", ",a", "", "n[]", "n[3-1]", "n[1-3", "n1-3]", "n[1-]", "n[-1]", "n[1--2]",
    "n[a-b]", "n[1x-2]", "n[+1-2]", "n[ 1-2]", "n[1, 3]", "n[[1-2]]", "a[1-2b[3]", "a]1[2]",
    "n[1-2]]", "[1-3]", "n[1,01]", "n[1-3,2-4]", "x[0-65535]", "x[0-65536]",
    "n[99999999999999999999]", "n99999999999999999999", "a" * 300, "a.[1-2]", "a[1-2].b",
    "a\nb[1-2]", "a-[008,,-009]x[0000]", "n[0-65535]x[1-2]",
]

# ---- what we deliberately do differently ------------------------------------------------------
def top_level(lst):
    """Our element split: (elements, has_empty_element)."""
    elems, empty, i, n = [], False, 0, len(lst)
    skip = lambda j: next((k for k in range(j, n) if lst[k] not in SPACE), n)
    i = skip(0)
    if i == n:
        return elems, True
    while True:
        if lst[i] == ",":
            empty = True
            i = skip(i + 1)
            if i == n:
                break
            continue
        start, inb = i, False
        while i < n:
            c = lst[i]
            if inb:
                inb = c != "]"
            elif c == "," or c in SPACE:
                break
            else:
                inb = c == "["
            i += 1
        elems.append(lst[start:i])
        i = skip(i)
        if i == n:
            break
        if lst[i] == ",":
            i = skip(i + 1)
            if i == n:
                empty = True
                break
    return elems, empty


def groups_of(elem):
    """Bracket bodies of a balanced element, or None when brackets are unbalanced or nested."""
    bodies, depth, body = [], 0, ""
    for c in elem:
        if c == "[":
            if depth:
                return None
            depth, body = 1, ""
        elif c == "]":
            if not depth:
                return None
            depth = 0
            bodies.append(body)
        elif depth:
            body += c
    return None if depth else bodies


def version_reasons(lst):
    if "\n" in lst and not slurm_splits_newlines:
        return {"newline (a separator only since Slurm 23.02; older Slurm keeps it in names)"}
    return set()


def bad_body(body):
    for piece in body.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", piece)
        if not m or (m.group(2) is not None and int(m.group(1)) > int(m.group(2))):
            return True
    return False


def strict_reasons(lst):
    """Why we reject a list that Slurm accepts (Slurm then yields garbage or guesses)."""
    reasons = version_reasons(lst)
    if any(not (32 < ord(c) < 127) and c not in SPACE for c in lst):
        reasons.add("control or non-ASCII character")
    elems, empty = top_level(lst)
    if empty:
        reasons.add("empty element (Slurm skips it)")
    for e in elems:
        bodies = groups_of(e)
        if bodies is None:
            reasons.add("unbalanced or nested brackets (Slurm keeps them in names)")
            continue
        # Slurm's recursion over 3+ groups ignores failures below its top level
        # (rc = MAX(rc, rc1)), so a bad range there just drops hosts.
        if any(bad_body(b) for b in bodies[:-2]):
            reasons.add("bad range in an inner group of 3+ (Slurm drops those hosts silently)")
        longest = len(re.sub(r"\[[^\]]*\]", "", e))
        for b in bodies:
            if any(c in SPACE for c in b):
                reasons.add("whitespace inside brackets (Slurm pads with it)")
            if "+" in b:
                reasons.add("sign in a range (strtoul accepts it)")
            widest = 0
            for piece in b.split(","):
                if piece.endswith("-") and len(piece) > 1:
                    reasons.add("range without a high bound (Slurm reads N- as N)")
                if re.fullmatch(r"\d+[^-\d][^-]*-.*", piece):
                    reasons.add("junk after a low bound (Slurm ignores it, but pads to its width)")
                nums = [x for x in re.findall(r"\d+", piece)]
                if any(int(x) > U64_MAX for x in nums):
                    reasons.add("number above 2^64-1 (Slurm clamps it)")
                if nums:
                    widest = max(widest, len(nums[0]), *(len(str(int(x))) for x in nums))
            longest += widest
        if longest > 255:
            reasons.add("host name over 255 characters")
    return reasons


def lenient_reasons(lst):
    """Why we accept a list that this Slurm rejects."""
    reasons = version_reasons(lst)
    for e in top_level(lst)[0]:
        if "]" in e and not e.endswith("]") and not slurm_has_suffix:
            reasons.add("text after the last bracket (Slurm < 23.02.5)")
        for piece in re.findall(r"(\d+)-(\d+)", e):
            if int(piece[1]) - int(piece[0]) + 1 > 65536:
                reasons.add("range over 65536 hosts (Slurm's per-range limit; ours is a total cap)")
    return reasons


def output_reasons(lst):
    """Why both accept but print different hosts."""
    reasons = version_reasons(lst)
    for e in top_level(lst)[0]:
        if "[" not in e and re.search(r"\d+$", e) and int(re.search(r"\d+$", e).group()) > U64_MAX:
            reasons.add("literal host with a number above 2^64-1 (Slurm clamps it)")
    return reasons


# ---- the comparison ----------------------------------------------------------------------------
def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    return p.returncode, p.stdout, p.stderr


def slurm(lst):
    rc, out, err = run(["scontrol", "show", "hostnames", "--", lst])
    if rc != 0 or "Invalid hostlist" in err:
        return None, err.strip()
    # Some malformed lists ("a-[008,,-009]x[0000]" in 22.05) give no hosts and no error.
    if not out and lst.strip(SPACE + ","):
        return None, "no output"
    return out.splitlines(), ""


def ours(lst):
    rc, out, err = run([expander, "hostnames", lst])
    if rc != 0:
        return None, err.strip()
    return out.splitlines(), ""


inputs = list(EDGE_CASES)
while len(inputs) < n_cases:
    s = valid_list()
    if rng.random() < 0.25:
        s = mutate(s)
    inputs.append(s)

inputs = [s for s in inputs if not s.lstrip(SPACE).startswith("-")]  # an option to the expander
with concurrent.futures.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
    results = list(pool.map(lambda s: (slurm(s), ours(s)), inputs))

stats = {"both accept, same hosts": 0, "both reject": 0}
failures = []
for lst, ((theirs, their_err), (mine, my_err)) in zip(inputs, results):
    if theirs is not None and mine is not None:
        if theirs == mine:
            key = "both accept, same hosts"
        elif output_reasons(lst):
            key = "both accept, known difference: " + ", ".join(sorted(output_reasons(lst)))
        else:
            failures.append((lst, "hosts differ", theirs[:10], mine[:10]))
            continue
    elif theirs is None and mine is None:
        key = "both reject"
    elif theirs is None:
        why = lenient_reasons(lst)
        if not why:
            failures.append((lst, "Slurm rejects, we accept", their_err, mine[:10]))
            continue
        key = "we accept, Slurm rejects: " + ", ".join(sorted(why))
    else:
        why = strict_reasons(lst)
        if not why:
            failures.append((lst, "Slurm accepts, we reject", theirs[:10], my_err))
            continue
        key = "we reject, Slurm accepts: " + ", ".join(sorted(why))
    stats[key] = stats.get(key, 0) + 1

print(f"scontrol {'.'.join(map(str, slurm_version))}, {len(inputs)} lists, seed {seed}")
for key, n in sorted(stats.items(), key=lambda kv: -kv[1]):
    print(f"  {n:5d}  {key}")
for lst, what, a, b in failures[:20]:
    print(f"FAIL {what}: {lst!r}\n     scontrol: {a!r}\n     ours:     {b!r}")
if failures:
    print(f"{len(failures)} difference(s)")
    sys.exit(1)
if stats["both accept, same hosts"] < len(inputs) // 2:
    print("FAIL: too few lists were compared; is the expander working?")
    sys.exit(1)
print("OK")
PYTHON
exit $?

#!/usr/bin/env python3
"""Markdown tables from `gpukit --json profile --counters --large --gpu a100,h100,h200`.

    python3 tools/perf-estimate/table.py LARGE.json [--before OLD.json]

Prints, for every kernel the workload launched (estimated from the PTX emulator's
counters, not measured), the estimated time on each GPU of the file, the bound that
limits it on the last GPU, the DRAM bytes against the ideal (an ideal L2: every sector
once; and without reuse: every request's sectors), coalescing, bank conflicts,
registers and occupancy. With --before, a second table lists the kernels whose
sectors-per-ideal, coalescing, bank conflicts or estimate changed between the two runs.
Only the standard library: runs with the machine's python3.
"""
import argparse
import json
import re


def load(path):
    with open(path) as f:
        v = json.load(f)
    return v if isinstance(v, list) else [v]


def by_kernel(table):
    return {k["kernel"]: k for k in table["kernels"]}


def family(name):
    """The kernel's op (its name without the dtype suffix), for ordering."""
    return re.sub(r"_(f32|f64|f16|bf16|i32|i64)(_.*)?$", "", name)


def ratio(a, b):
    return a / b if b else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("large")
    ap.add_argument("--before")
    args = ap.parse_args()
    tables = load(args.large)
    gpus = [t["gpu"] for t in tables]
    rows = [by_kernel(t) for t in tables]
    last = rows[-1]
    names = sorted(last, key=lambda n: (family(n), n))
    head = ["kernel", "calls"] + [f"{g} µs" for g in gpus]
    head += [f"bound ({gpus[-1]})", "dram ÷ ideal", "sectors ÷ ideal", "coal", "bank", "regs",
             "occ"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for n in names:
        k = last[n]
        cells = [f"`{n}`", str(k["calls"])]
        cells += [f"{r[n]['estimated_s'] * 1e6:.1f}" if n in r else "" for r in rows]
        cells += [
            k["bound"],
            f"{ratio(k['dram_bytes_lower'], k['ideal_bytes']):.2f}",
            f"{ratio(k['dram_bytes_upper'], k['ideal_bytes']):.2f}",
            f"{k['coalescing']:.2f}",
            f"{k['bank_conflicts_per_request']:.2f}",
            str(k["registers"]),
            f"{k['occupancy_min']:.2f}",
        ]
        print("| " + " | ".join(cells) + " |")
    totals = " · ".join(f"{t['gpu']} {t['estimated_total_s'] * 1e3:.2f} ms" for t in tables)
    print(f"\nEstimated total of the workload: {totals}.")
    if args.before:
        old = load(args.before)
        old_last = [t for t in old if t["gpu"] == gpus[-1]] or old[-1:]
        before = by_kernel(old_last[0])
        print(f"\nChanged since the earlier run ({gpus[-1]}):\n")
        print("| kernel | sectors ÷ ideal | coal | bank | est µs |")
        print("|---|---|---|---|---|")
        for n in names:
            # A kernel the fix renamed (a new auxiliary entry) is compared with its op.
            o = before.get(n) or before.get(n.replace("cumsum_rows", "cumsum"))
            k = last[n]
            if o is None:
                continue
            up_o = ratio(o["dram_bytes_upper"], o["ideal_bytes"])
            up_n = ratio(k["dram_bytes_upper"], k["ideal_bytes"])
            changed = (
                abs(up_o - up_n) > 0.01
                or abs(o["coalescing"] - k["coalescing"]) > 0.01
                or abs(o["bank_conflicts_per_request"] - k["bank_conflicts_per_request"]) > 0.01
            )
            if changed:
                print(
                    f"| `{n}` | {up_o:.2f} → {up_n:.2f} | {o['coalescing']:.2f} → "
                    f"{k['coalescing']:.2f} | {o['bank_conflicts_per_request']:.2f} → "
                    f"{k['bank_conflicts_per_request']:.2f} | {o['estimated_s'] * 1e6:.1f} → "
                    f"{k['estimated_s'] * 1e6:.1f} |"
                )


if __name__ == "__main__":
    main()

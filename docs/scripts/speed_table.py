"""The README's and the user guide's speed tables, from ``fastpamst bench --json``.

Every cell is the case's median time over the floor's (a textbook dense Prim, in
the same run), with the floor's own time in seconds; the sparse line compares with
scipy. Run::

    fastpamst bench --n 2000 4000 8000 16000 --repeat 3 --sparse 100000 --json bench.json
    python docs/scripts/speed_table.py bench.json
"""
import argparse
import json

from fastpamst_nb.bench import floor_ratios


def rows(doc):
    """The sizes, (case, [cells]) per case (x floor; the floor in seconds), and the
    sparse result (or None)."""
    ns = [k for k in doc if k.isdigit()]
    cells = []
    for case, ratios in floor_ratios({n: doc[n] for n in ns}):
        if case == "floor":
            cells.append((case, [f"{x:.3g} s" for x in ratios]))
        elif any(x is not None for x in ratios):
            cells.append((case, ["skipped" if x is None else f"{x:.1f}" for x in ratios]))
    return ns, cells, doc.get("sparse")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    doc = json.load(open(ap.parse_args().json))
    ns, table, sparse = rows(doc)
    print("| x floor | " + " | ".join(f"n = {n}" for n in ns) + " |")
    print("|---|" + "---|" * len(ns))
    for case, cells in table:
        print(f"| {case} | " + " | ".join(cells) + " |")
    print()
    print(".. list-table:: Median time over the floor's (the floor in seconds)")
    print("   :header-rows: 1\n   :stub-columns: 1\n")
    print("   * - x floor")
    for n in ns:
        print(f"     - n = {n}")
    for case, cells in table:
        print(f"   * - {case}")
        for c in cells:
            print(f"     - {c}")
    if sparse:
        print(f"\nsparse n = {sparse['n']}, m = {sparse['m']}: fast_pamst {sparse['fast_pamst']:.2f} s, "
              f"scipy {sparse['scipy_mst']:.2f} s, {sparse['fast_pamst'] / sparse['scipy_mst']:.1f}x")


if __name__ == "__main__":
    main()

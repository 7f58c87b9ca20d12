#!/usr/bin/env python3
"""scripts/merge_proofs.py — one claims ledger from the ledgers of a test program run in shards.

The main job runs posenc_properties as GoogleTest shards side by side (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), each
writing the whole ledger (every claim; those whose tests ran elsewhere as "not run") into its own directory. A
claim's tests may fall into different shards, so the ledgers are merged claim by claim:
  status   failed if any shard failed it, else passed if any shard passed it, else not run;
  cases    summed, and so the region counts;
  rows     per budget row: cases summed, the largest max_error with its worst input, failures concatenated;
  headline the row closest to its bound (max_error / bound; a positive error against bound 0 is the tightest),
           as the C++ ledger chooses it (properties/support/claims.cpp).
The meta block is the first shard's, with the shards named.

Usage: merge_proofs.py OUT.json SHARD.json...        Python 3 standard library only.
"""
import json
import math
import sys

RANK = {"failed": 2, "passed": 1}


def merge_rows(rows_a, rows_b):
    by_id = {r["budget_row"]: dict(r) for r in rows_a}
    for r in rows_b:
        m = by_id.get(r["budget_row"])
        if m is None:
            by_id[r["budget_row"]] = dict(r)
            continue
        m["cases"] = (m.get("cases") or 0) + (r.get("cases") or 0)
        m["failures"] = (m.get("failures") or []) + (r.get("failures") or [])
        if r.get("max_error") is not None and (m.get("max_error") is None or r["max_error"] > m["max_error"]):
            m["max_error"], m["worst_input"] = r["max_error"], r.get("worst_input")
    return list(by_id.values())


def tightness(row):
    err, bound = row.get("max_error"), row.get("bound") or 0
    if err is None:
        return -1.0
    return err / bound if bound > 0 else (math.inf if err > 0 else 0.0)


def set_headline(claim):
    rows = claim.get("rows") or []
    if not rows:
        return
    head = max(rows, key=tightness)
    if tightness(head) < 0 and claim.get("budget_row"):
        return  # no row measured anything: keep the claim's own fallback row
    for key in ("budget_row", "metric", "bound", "max_error", "worst_input"):
        claim[key] = head.get(key)


def merge_claim(a, b):
    out = dict(a)
    out["status"] = max((a.get("status"), b.get("status")), key=lambda s: RANK.get(s, 0))
    out["cases"] = (a.get("cases") or 0) + (b.get("cases") or 0)
    regions = dict(a.get("regions") or {})
    for k, v in (b.get("regions") or {}).items():
        regions[k] = regions.get(k, 0) + v
    out["regions"] = regions
    out["rows"] = merge_rows(a.get("rows") or [], b.get("rows") or [])
    set_headline(out)
    return out


def merge(ledgers):
    claims, order = {}, []
    for ledger in ledgers:
        for c in ledger.get("claims", []):
            if c["id"] in claims:
                claims[c["id"]] = merge_claim(claims[c["id"]], c)
            else:
                claims[c["id"]], order = dict(c), order + [c["id"]]
    meta = dict(ledgers[0].get("meta", {}))
    meta["shards"] = len(ledgers)
    return {"meta": meta, "claims": [claims[i] for i in order]}


def main(argv):
    if len(argv) < 3:
        print("usage: merge_proofs.py OUT.json SHARD.json...", file=sys.stderr)
        return 2
    ledgers = []
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            ledgers.append(json.load(f))
    with open(argv[1], "w", encoding="utf-8") as f:
        json.dump(merge(ledgers), f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

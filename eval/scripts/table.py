#!/usr/bin/env python3
"""Prints a Markdown table of amber-eval reports: one row per report.

usage: table.py [--strict] [--cols recall_all@5,recall_any@5,ndcg_any@10] LABEL=REPORT.json ...
"""
import json
import sys

args = sys.argv[1:]
avg = "metrics"
cols = ["recall_all@5", "recall_any@5", "ndcg_any@10", "recall_all@10"]
rows = []
while args:
    a = args.pop(0)
    if a == "--strict":
        avg = "metrics_strict"
    elif a == "--cols":
        cols = args.pop(0).split(",")
    else:
        label, path = a.split("=", 1)
        rows.append((label, json.load(open(path))))
print("| setting | " + " | ".join(cols) + " | n | wall s |")
print("|---" * (len(cols) + 3) + "|")
for label, r in rows:
    m = r.get(avg) or r["metrics"]
    n = r["n_scored"] if avg == "metrics" else r["n_scored"] - r["config"].get("no_gold_questions", 0)
    vals = " | ".join(f"{m[c]:.3f}" if c in m else "-" for c in cols)
    print(f"| {label} | {vals} | {n} | {r['wall_seconds']:.0f} |")

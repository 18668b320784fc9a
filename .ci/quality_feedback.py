#!/usr/bin/env python3
"""Simulated-feedback replay over the retrieval-quality benchmark.

    quality_feedback.py --palace bin/palace --quality ../shared/quality [--out DIR]

Uses the benchmark's own loader and scorer (QUALITY/run.py) on a copy of its
cached palace, and measures the dev tasks three ways:

  baseline   the packs as they are (dry runs, nothing recorded)
  replay     after one pass of the tasks as real requests (injection counts
             accumulate, as `run.py --replay 1` does)
  feedback   after the same pass, each pack answered by an agent that says
             what it did with it through `palace adopt`, naming the pack's
             request id: every relevant card the pack showed (inline or as a
             reference) `used`; every card it inlined that did not fit the
             task (neither relevant nor acceptable: the bait, and any other
             card the agent read and could not use) `rejected`; and a `miss`
             (with a note, no card: the agent does not know the card exists)
             for each relevant card the pack did not show
  bait-only  the same, but only bait cards are rejected (reported, not
             checked: an agent rejecting only the lexically tempting cards)

Measuring repeats each task's request exactly, so the signals count for it
(and, by the same rule, for any request like it). The check fails when,
with feedback, R@inline or P@inline is below the baseline or below the
replay without feedback: feedback must raise quality, never lower it.
"""
import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile


def load_runner(quality_dir):
    spec = importlib.util.spec_from_file_location("quality_run", os.path.join(quality_dir, "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def task_args(t):
    args = ["context", t["query"]]
    if t.get("file"):
        args += ["--file", t["file"]]
    if t.get("language"):
        args += ["--language", t["language"]]
    if t.get("field"):
        args += ["--field", t["field"]]
    if t.get("intents"):
        args += ["--intent", ",".join(t["intents"])]
    if t.get("budget"):
        args += ["--budget", str(t["budget"])]
    return args


def replay(run, pal, root, tasks, idmap, feedback, reject="unfit"):
    """One pass of the tasks as real requests; with feedback, the simulated
    agent's signals after each pack. Returns the signal counts."""
    key_of = {v: k for k, v in idmap.items()}
    counts = {"used": 0, "rejected": 0, "miss": 0}
    for t in tasks:
        cwd = os.path.join(root, "repos", t["repo"])
        p, _ = pal.run(cwd, task_args(t))
        if not feedback:
            continue
        pack = json.loads(p.stdout)
        rq = pack["request_id"]
        rel, acc, bait = set(t["relevant"]), set(t.get("acceptable", [])), set(t.get("bait", []))
        shown = set()
        for it in pack["items"]:
            if it["render_form"] not in run.INLINE + ("ref_only",):
                continue
            k = key_of.get(it["id"])
            shown.add(k)
            if k in rel:
                signal, note = "used", "simulated: the task needed it"
            elif k in bait:
                signal, note = "rejected", "simulated: tempting, wrong for this task"
            elif reject == "unfit" and it["render_form"] in run.INLINE and k not in acc:
                signal, note = "rejected", "simulated: read it, it does not fit this task"
            else:
                continue
            pal.run(cwd, ["adopt", signal, "--card", it["id"], "--request", rq, "--note", note])
            counts[signal] += 1
        for k in sorted(rel - shown):
            pal.run(cwd, ["adopt", "miss", "--request", rq, "--note", "simulated: needed knowledge the pack did not give (%s)" % t["id"]])
            counts["miss"] += 1
    return counts


def measure(run, pal, root, idmap, corpus, tasks):
    rows = run.run_tasks(pal, root, idmap, corpus, tasks, ["palace"], lambda s: None)
    return rows, run.aggregate(rows, "palace")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--palace", required=True)
    ap.add_argument("--quality", required=True, help="the benchmark's directory (run.py, corpus.jsonl, dev/)")
    ap.add_argument("--cache", default=os.environ.get("PALACE_QUALITY_CACHE", os.path.expanduser("~/.cache/palace-quality")))
    ap.add_argument("--out", help="write the three aggregates here as JSON")
    args = ap.parse_args()
    run = load_runner(args.quality)
    binary = os.path.abspath(args.palace)
    corpus_path = os.path.join(args.quality, "corpus.jsonl")
    corpus = run.read_jsonl(corpus_path)
    tasks = run.read_jsonl(os.path.join(args.quality, "dev", "tasks.jsonl"))
    root, idmap, _ = run.load_palace(binary, corpus_path, args.cache, 4, lambda s: print(s, file=sys.stderr))
    results = {}
    for mode in ("baseline", "replay", "bait-only", "feedback"):
        tmp = tempfile.mkdtemp(prefix="palace-quality-feedback.")
        try:
            home = os.path.join(tmp, "home")
            shutil.copytree(os.path.join(root, "home"), home)
            pal = run.Palace(binary, home)
            signals = {}
            if mode != "baseline":
                signals = replay(run, pal, root, tasks, idmap, mode != "replay", "bait" if mode == "bait-only" else "unfit")
            _, agg = measure(run, pal, root, idmap, corpus, tasks)
            agg["signals"] = signals
            results[mode] = agg
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%-10s %8s %8s %8s %7s %6s %8s  %s" % ("dev", "R@inline", "R@pack", "P@inline", "MRR", "leaks", "chars", "signals"))
    for mode, a in results.items():
        print("%-10s %8.3f %8.3f %8.3f %7.3f %6d %8.0f  %s" % (mode, a["recall_inline"], a["recall_pack"], a["precision_inline"], a["rr"],
                                                             a["leaks"], a["chars"], a.get("signals") or "-"))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "dev-feedback.json"), "w") as f:
            json.dump(run.clean(results), f, indent=1)
    fb = results["feedback"]
    bad = []
    for k, name in (("recall_inline", "R@inline"), ("precision_inline", "P@inline")):
        for ref in ("baseline", "replay"):
            if fb[k] < results[ref][k]:
                bad.append("%s with feedback %.3f < %s %.3f" % (name, fb[k], ref, results[ref][k]))
        if fb[k] <= results["baseline"][k]:
            bad.append("%s with feedback %.3f does not rise over the baseline %.3f" % (name, fb[k], results["baseline"][k]))
    if fb["leaks"]:
        bad.append("%d leaks with feedback" % fb["leaks"])
    if bad:
        sys.exit("feedback replay: " + "; ".join(bad))
    print("feedback replay raises R@inline and P@inline")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""CPU time per render of every dev-corpus template, chatplate beside minijinja-py and
transformers, at 100, 1,000 and 10,000 messages (issue 38's bench group).

For each template of ../shared/conformance/dev/templates and each size, the long
conversation of scripts/long_conversation.py (a tool call every tenth turn) is rendered:

* by transformers' `render_jinja_template` (the reference): its prompt becomes the
  fixture's `expected` (under target/bench-speed/, never committed) and `chatplate check`
  must pass every fixture (the "identical" column);
* by minijinja-py (the MiniJinja chatplate builds on, bare, from Python; compiled once,
  with transformers' `tojson`): "same" when its prompt equals transformers';
* by chatplate (`chatplate bench FIXTURE --iterations N`, the release build).

Every figure is CPU time (user + sys), never wall time alone, and the engines run in
interleaved rounds (every engine once per case per round), so a busy machine slows all
of them alike; the ratios are medians of the per-round ratios. Python's CPU is
`time.process_time()` around the render; chatplate's is the CPU the `bench` child used
for N renders less what it used for one (start, fixture, compile and one render cancel
out), divided by N-1. chatplate's wall time is `bench`'s own median. The load average
(1 minute) is printed beside each row, and the header names the date and the commit:
figures from a loaded machine (load >= 1.5) are marked as not publishable.

A template whose reference refuses the conversation (it raises) is listed as such. A
Python render predicted to take more than --max-python seconds (from the previous size,
assuming the template is quadratic) is not run: its column says "skipped".

Usage (from the repository root; `cargo build --release`; transformers 5.23 and, for
the minijinja-py column, `pip install minijinja`):

    python3 scripts/bench_speed.py [--rounds 3] [--sizes 100,1000,10000] [--only Reka,gpt-oss] [--out FILE]

It prints a summary (each ratio's range and the rows below 1.0x: the figures README.md
quotes) and a Markdown table, and writes them to target/bench-speed/results.md.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

try:
    import minijinja
except ImportError:  # the column says so
    minijinja = None
import transformers.utils.chat_template_utils as ctu

from long_conversation import CLOCK, TOOLS, FixedClock, conversation, template_variables

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT.parent / "shared" / "conformance" / "dev" / "templates"
OUT = ROOT / "target" / "bench-speed"
CHATPLATE = ROOT / "target" / "release" / "chatplate"
# CPU seconds each engine should spend per case per round (more renders for fast cases).
TARGET_CPU = 0.3


class Case:
    """One template at one size: its inputs, its fixture and the Python renderers."""

    def __init__(self, stem, count):
        self.stem, self.count = stem, count
        self.source = (TEMPLATES / f"{stem}.jinja").read_text()
        meta = json.loads((TEMPLATES / f"{stem}.json").read_text())
        self.kwargs = {"bos_token": meta.get("bos_token"), "eos_token": meta.get("eos_token"),
                       **template_variables(meta)}
        self.messages = conversation(count, call_content="")
        self.path = OUT / f"{stem}-{count}.json"
        self.mini = minijinja_py(self.source)
        self.expected = None
        self.refused = None
        self.mini_same = False
        self.runs = {"chatplate": 1, "transformers": 1, "minijinja": 1}

    def transformers(self):
        return ctu.render_jinja_template(conversations=[self.messages], tools=TOOLS, chat_template=self.source,
                                         add_generation_prompt=True, **self.kwargs)[0][0]

    def minijinja_py(self):
        return self.mini.render_template("chat", messages=self.messages, tools=TOOLS, add_generation_prompt=True,
                                         **self.kwargs)

    def write_fixture(self):
        relative = os.path.relpath(TEMPLATES / f"{self.stem}.jinja", OUT)
        tokens = {k: self.kwargs[k] for k in ("bos_token", "eos_token") if self.kwargs.get(k) is not None}
        variables = {k: v for k, v in self.kwargs.items() if k not in ("bos_token", "eos_token")}
        fixture = {"version": 1, "template": {"path": relative}, **tokens, "add_generation_prompt": True,
                   "messages": self.messages, "tools": TOOLS, "variables": variables, "clock": CLOCK,
                   **({"expected": {"prompt": self.expected}} if self.expected is not None else {})}
        self.path.write_text(json.dumps(fixture, ensure_ascii=False))


def minijinja_py(source):
    """The template in minijinja-py (pycompat on) with transformers' settings, `tojson` and
    globals, compiled once; None when minijinja is not installed."""
    if minijinja is None:
        return None
    reference = ctu._compile_jinja_template(source)
    env = minijinja.Environment(trim_blocks=True, lstrip_blocks=True, pycompat=True)
    env.add_filter("tojson", reference.environment.filters["tojson"])
    for name in ("raise_exception", "strftime_now"):
        if name in reference.environment.globals:
            env.add_function(name, reference.environment.globals[name])
    try:
        env.add_template("chat", source)
    except minijinja.TemplateError:  # a tag it lacks (`{% generation %}`): the column says so
        return False
    return env


def python_cpu(call, runs):
    """CPU seconds per call of `call`, over `runs` calls."""
    start = time.process_time()
    for _ in range(runs):
        call()
    return (time.process_time() - start) / runs


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(text):
    number, unit = re.fullmatch(r"([0-9.]+)(ns|µs|us|ms|s)", text).groups()
    return float(number) * UNITS[unit]


def bench_child(case, iterations):
    """(CPU seconds, median wall render) of `chatplate bench` with `iterations` renders."""
    before = children_cpu()
    out = subprocess.run([str(CHATPLATE), "bench", str(case.path), "--iterations", str(iterations)],
                         check=True, capture_output=True, text=True).stdout
    fields = out.strip().splitlines()[-1].split()
    return children_cpu() - before, seconds(fields[-2])


def chatplate_cpu(case, runs):
    """(CPU seconds per render, median wall render) of chatplate: `runs + 1` renders less one."""
    one, _ = bench_child(case, 1)
    many, wall = bench_child(case, runs + 1)
    return max(many - one, 0.0) / runs, wall


def load_average():
    return float(Path("/proc/loadavg").read_text().split()[0])


def calibrate(case, skip_python):
    """Renders each engine once: the reference prompt, identity, and how many renders
    make about TARGET_CPU seconds per round. Without Python (predicted too slow) the
    fixture has no `expected` and is not checked."""
    if skip_python:
        case.write_fixture()
        cpu, _ = bench_child(case, 1)
        case.runs["chatplate"] = max(2, min(1000, round(TARGET_CPU / max(cpu, 1e-4))))
        return
    start = time.process_time()
    try:
        case.expected = case.transformers()
    except Exception as error:  # the template refuses this conversation
        case.refused = f"{type(error).__name__}"
        return
    single = time.process_time() - start
    case.runs["transformers"] = max(1, round(TARGET_CPU / max(single, 1e-6)))
    case.transformers_single = single
    case.write_fixture()
    if case.mini:
        start = time.process_time()
        try:
            case.mini_same = case.minijinja_py() == case.expected
        except Exception:
            case.mini_same = None
        case.runs["minijinja"] = max(1, round(TARGET_CPU / max(time.process_time() - start, 1e-6)))
    cpu, _ = bench_child(case, 1)
    case.runs["chatplate"] = max(2, min(1000, round(TARGET_CPU / max(cpu, 1e-4))))


def predicted(case, previous, max_python):
    """Whether the Python engines are predicted to take over `max_python` seconds here."""
    if previous is None or previous.refused or previous.skip_python:
        return previous is not None and previous.skip_python
        return False
    growth = (case.count / previous.count) ** 2
    return previous.transformers_single * growth > max_python


def run_rounds(cases, rounds):
    samples = {id(c): {"chatplate": [], "wall": [], "transformers": [], "minijinja": [], "load": []} for c in cases}
    for number in range(rounds):
        for case in cases:
            if case.refused:
                continue
            s = samples[id(case)]
            s["load"].append(load_average())
            cpu, wall = chatplate_cpu(case, case.runs["chatplate"])
            s["chatplate"].append(cpu)
            s["wall"].append(wall)
            if case.skip_python:
                continue
            s["transformers"].append(python_cpu(case.transformers, case.runs["transformers"]))
            if case.mini and case.mini_same is not None:
                s["minijinja"].append(python_cpu(case.minijinja_py, case.runs["minijinja"]))
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    return samples


def ms(value):
    return f"{value * 1000:.3g} ms" if value < 1 else f"{value:.2f} s"


def ratio(numerators, denominators):
    ratios = [n / d for n, d in zip(numerators, denominators) if d > 0]
    if not ratios:
        return "-"
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def check_fixtures():
    done = subprocess.run([str(CHATPLATE), "check", str(OUT), "--template-root", str(TEMPLATES)],
                          capture_output=True, text=True)
    failed = set(re.findall(r"^FAIL (\S+?):", done.stdout, re.M))
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip(), failed


def commit():
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
    except FileNotFoundError:
        return "unknown"


def table(cases, samples, failed):
    lines = [
        "| Template | Messages | chatplate CPU | wall | growth | transformers CPU | minijinja-py CPU "
        "| transformers / chatplate | minijinja-py / chatplate | identical | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    previous = {}
    for case in cases:
        if case.refused:
            lines.append(f"| {case.stem} | {case.count:,} | reference raises {case.refused} | | | | | | | | |")
            continue
        s = samples[id(case)]
        ours = statistics.median(s["chatplate"])
        before = previous.get(case.stem)
        growth = f"{ours / before:.1f}x" if before else ""
        previous[case.stem] = ours
        theirs = ms(statistics.median(s["transformers"])) if s["transformers"] else "skipped"
        if minijinja is None:
            mini = "not installed"
        elif case.mini is False:
            mini = "cannot compile"
        elif case.mini_same is None:
            mini = "raises"
        elif not s["minijinja"]:
            mini = "skipped"
        else:
            mini = ms(statistics.median(s["minijinja"])) + ("" if case.mini_same else " (differs)")
        n = len(s["transformers"])
        same = "not checked" if case.skip_python else "no" if case.path.name in failed else "yes"
        lines.append(
            f"| {case.stem} | {case.count:,} | {ms(ours)} | {ms(statistics.median(s['wall']))} | {growth} "
            f"| {theirs} | {mini} | {ratio(s['transformers'], s['chatplate'][:n])} "
            f"| {ratio(s['minijinja'], s['chatplate'][:len(s['minijinja'])])} | {same} "
            f"| {statistics.median(s['load']):.2f} |")
    return lines


def summary(cases, samples):
    """The figures README.md and BENCHMARKS.md quote, from the same samples as the table:
    the range of each ratio, where it is lowest and highest, and the rows below 1.0x."""
    rows = {"transformers": [], "minijinja": []}
    for case in cases:
        if case.refused:
            continue
        s = samples[id(case)]
        ours = statistics.median(s["chatplate"])
        for engine in rows:
            if s[engine] and (engine != "minijinja" or case.mini_same):
                rows[engine].append((statistics.median(s[engine]) / ours, case.stem, case.count))
    lines = []
    names = {"transformers": "transformers", "minijinja": "minijinja-py"}
    for engine, found in rows.items():
        if not found:
            continue
        low, high = min(found), max(found)
        below = [r for r in found if r[0] < 1.0]
        templates = len({stem for _, stem, _ in found})
        lines.append(
            f"* {names[engine]} / chatplate (CPU): {low[0]:.2f}x ({low[1]} at {low[2]:,}) to "
            f"{high[0]:.2f}x ({high[1]} at {high[2]:,}) over {len(found)} rows of {templates} templates; "
            f"{len(below)} rows below 1.0x"
            + (": " + ", ".join(f"{stem} at {count:,} ({r:.2f}x)" for r, stem, count in sorted(below)) if below else "")
            + ".")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--only", default="", help="comma-separated substrings of template names")
    parser.add_argument("--max-python", type=float, default=30.0,
                        help="seconds: Python renders predicted to take longer are not run")
    parser.add_argument("--out", type=Path, default=OUT / "results.md")
    parser.add_argument("--chatplate", type=Path, help="the chatplate binary to time (default: the release build)")
    args = parser.parse_args()
    global CHATPLATE
    CHATPLATE = args.chatplate or CHATPLATE
    ctu.datetime = FixedClock
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    only = [o for o in args.only.split(",") if o]
    stems = sorted(p.stem for p in TEMPLATES.glob("*.jinja") if not only or any(o in p.stem for o in only))
    sizes = [int(n) for n in args.sizes.split(",")]
    load_before = load_average()
    cases = []
    for stem in stems:
        previous = None
        for count in sizes:
            case = Case(stem, count)
            case.skip_python = predicted(case, previous, args.max_python)
            calibrate(case, case.skip_python)
            print(f"{stem} {count}: {'refused ' + case.refused if case.refused else 'ok'}", file=sys.stderr)
            cases.append(case)
            previous = case
    checked, failed = check_fixtures()
    samples = run_rounds(cases, args.rounds)
    load_after = load_average()
    quiet = "quiet" if max(load_before, load_after) < 1.5 else "NOT QUIET: do not publish"
    header = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit {commit()} on {os.cpu_count()} cores, "
        f"release build, {args.rounds} interleaved rounds; load average (1 min) {load_before:.2f} before and "
        f"{load_after:.2f} after ({quiet}). CPU = user + sys per render. `chatplate check` on the fixtures: {checked}.",
        "",
    ]
    text = "\n".join(header + summary(cases, samples) + [""] + table(cases, samples, failed)) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

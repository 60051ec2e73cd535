#!/usr/bin/env python3
"""chatplate side by side with transformers 5.23 and plain jinja2.

For Llama-3.1, Qwen3, gpt-oss, DeepSeek-V3.1 and Gemma-4 from the conformance corpus,
at 10, 100, 1,000 and 10,000 messages (conversations generated here, written under
target/bench-vs-transformers/, never committed):

* byte identity: transformers renders each conversation once; that prompt becomes
  the fixture's `expected`, and `chatplate check` must pass every fixture; plain
  jinja2's output is compared too;
* render time, in interleaved rounds (every engine once per case per round, so a
  busy machine slows all of them alike): `chatplate bench` (median render, and the
  compile), transformers `render_jinja_template` warm (template compiled and cached)
  and cold (its compile cache cleared before each call), and plain jinja2 (the same
  compiled template rendered directly, without transformers' preparation),
  minijinja-py (the same MiniJinja chatplate builds on, reached from Python, with its
  pycompat and transformers' Python `tojson`, compiled once) and @huggingface/jinja
  (Node, compiled once, timed inside Node); medians over rounds and the median of the
  per-round ratios. An engine that is not installed, or whose prompt differs from
  transformers', is shown as such (a differing prompt is still timed, marked);
* `chatplate check` on the whole corpus (fixtures/s, peak RSS) against transformers
  rendering the same 798 fixtures in one Python process.

Usage (from the repository root; needs `cargo build --release` and
`pip install transformers==5.23.0 jinja2==3.1.6`, e.g. the venv in /work/venv; for the
optional columns `pip install minijinja` and `bash scripts/fetch_hf_jinja.sh` with Node):

    python3 scripts/bench_vs_transformers.py [--rounds 5] [--sizes 10,100,1000,10000] [--skip Gemma-4:10000]

It prints a Markdown table (also written to target/bench-vs-transformers/results.md).
Not part of CI: a full run takes minutes (transformers needs seconds for one Gemma-4
render at 1,000 messages and minutes at 10,000; cases whose single
Python render exceeds --slow seconds get one round only on the Python side).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jinja2
import jinja2.ext

try:
    import minijinja
except ImportError:  # the column says so
    minijinja = None
import transformers.utils.chat_template_utils as ctu

from long_conversation import CLOCK, TOOLS, FixedClock, conversation

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "conformance" / "dev"
TEMPLATES = CORPUS / "templates"
OUT = ROOT / "target" / "bench-vs-transformers"
CHATPLATE = ROOT / "target" / "release" / "chatplate"
NODE_MODULES = ROOT / "target" / "node" / "node_modules"
HF_JINJA_BENCH = ROOT / "scripts" / "bench_hf_jinja.js"
MODELS = {
    "Llama-3.1": "meta-llama-Llama-3.1-8B-Instruct",
    "Qwen3": "Qwen-Qwen3-0.6B",
    "gpt-oss": "openai-gpt-oss-120b",
    "DeepSeek-V3.1": "deepseek-ai-DeepSeek-V3.1",
    "Gemma-4": "google-gemma-4-31B-it",
}


class Case:
    """One template at one size: its inputs, the fixture file and the Python renderers."""

    def __init__(self, model, count):
        self.model, self.count = model, count
        self.source = (TEMPLATES / f"{MODELS[model]}.jinja").read_text()
        meta = json.loads((TEMPLATES / f"{MODELS[model]}.json").read_text())
        self.tokens = {"bos_token": meta.get("bos_token"), "eos_token": meta.get("eos_token"), **meta.get("extra", {})}
        self.messages = conversation(count, call_content="")
        self.path = OUT / f"{model}-{count}.json"
        self.plain = plain_jinja2(self.source)
        self.mini = minijinja_py(self.source)

    def transformers(self):
        return ctu.render_jinja_template(conversations=[self.messages], tools=TOOLS, chat_template=self.source,
                                         add_generation_prompt=True, **self.tokens)[0][0]

    def transformers_cold(self):
        ctu._compile_jinja_template.cache_clear()
        return self.transformers()

    def jinja2(self):
        return self.plain.render(messages=self.messages, tools=TOOLS, add_generation_prompt=True, **self.tokens)

    def minijinja_py(self):
        return self.mini.render_template("chat", messages=self.messages, tools=TOOLS, add_generation_prompt=True,
                                         **self.tokens)

    def hf_jinja(self, iterations):
        """(median render in seconds, prompt) from @huggingface/jinja, or None when Node or
        the package is missing."""
        # Not a .json file: `chatplate check` on OUT would take it for a fixture.
        case_file = self.path.with_suffix(".hf-jinja-input")
        if not case_file.exists():
            context = {"messages": self.messages, "tools": TOOLS, "add_generation_prompt": True, **self.tokens}
            case_file.write_text(json.dumps({"template": self.source, "context": context}, ensure_ascii=False))
        env = {**os.environ, "NODE_PATH": str(NODE_MODULES), "TZ": "UTC"}
        try:
            done = subprocess.run(["node", str(HF_JINJA_BENCH), str(case_file), str(iterations)],
                                  capture_output=True, text=True, env=env)
        except FileNotFoundError:
            return None
        if done.returncode != 0:
            return None
        out = json.loads(done.stdout)
        return out["seconds"], out["prompt"]

    def write_fixture(self, expected):
        relative = os.path.relpath(TEMPLATES / f"{MODELS[self.model]}.jinja", OUT)
        fixture = {"version": 1, "template": {"path": relative}, **{k: v for k, v in self.tokens.items() if k in ("bos_token", "eos_token")},
                   "add_generation_prompt": True, "messages": self.messages, "tools": TOOLS, "clock": CLOCK,
                   "expected": {"prompt": expected}}
        self.path.write_text(json.dumps(fixture, ensure_ascii=False))


def plain_jinja2(source):
    """The template in a plain (unsandboxed) jinja2 environment with transformers'
    settings, filters and globals, compiled once."""
    reference = ctu._compile_jinja_template(source)
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters.update(reference.environment.filters)
    env.globals.update(reference.environment.globals)
    return env.from_string(source)


def minijinja_py(source):
    """The template in minijinja-py (pycompat on, its default) with transformers' settings,
    filters and globals, compiled once; None when minijinja is not installed."""
    if minijinja is None:
        return None
    reference = ctu._compile_jinja_template(source)
    env = minijinja.Environment(trim_blocks=True, lstrip_blocks=True, pycompat=True)
    for name in ("tojson",):
        env.add_filter(name, reference.environment.filters[name])
    for name in ("raise_exception", "strftime_now"):
        if name in reference.environment.globals:
            env.add_function(name, reference.environment.globals[name])
    env.add_template("chat", source)
    return env


def timed(call, runs):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(text):
    number, unit = re.fullmatch(r"([0-9.]+)(ns|µs|us|ms|s)", text).groups()
    return float(number) * UNITS[unit]


def chatplate_bench(case, iterations):
    """(compile, median render) in seconds from `chatplate bench`."""
    out = subprocess.run([str(CHATPLATE), "bench", str(case.path), "--iterations", str(iterations)],
                         check=True, capture_output=True, text=True).stdout
    fields = out.strip().splitlines()[-1].split()
    return seconds(fields[-4]), seconds(fields[-2])


def iterations_for(count):
    return {10: 200, 100: 100, 1000: 20}.get(count, 5)


def run_rounds(cases, rounds, slow):
    results = {id(c): {"chatplate": [], "compile": [], "warm": [], "cold": [], "jinja2": [], "minijinja": [],
                       "hf_jinja": []} for c in cases}
    for number in range(rounds):
        for case in cases:
            r = results[id(case)]
            runs = iterations_for(case.count)
            compile_s, render_s = chatplate_bench(case, runs)
            r["compile"].append(compile_s)
            r["chatplate"].append(render_s)
            if number > 0 and case.python_single > slow:
                continue
            py_runs = 1 if case.python_single > slow else max(1, runs // 4)
            r["warm"].append(timed(case.transformers, py_runs))
            r["cold"].append(timed(case.transformers_cold, max(1, py_runs // 2)))
            r["jinja2"].append(timed(case.jinja2, py_runs))
            if case.mini is not None and case.mini_works:
                r["minijinja"].append(timed(case.minijinja_py, py_runs))
            hf = case.hf_jinja(runs)
            if hf is not None:
                r["hf_jinja"].append(hf[0])
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    return results


def ms(value):
    return f"{value * 1000:.3g} ms" if value < 1 else f"{value:.2f} s"


def median_text(samples, note=""):
    return f"{ms(statistics.median(samples))}{note}" if samples else "not run"


def ratio_text(numerators, denominators):
    ratios = [n / d for n, d in zip(numerators, denominators)]
    if not ratios:
        return "-"
    return f"{statistics.median(ratios):.1f}x ({min(ratios):.1f}-{max(ratios):.1f})"


def engine_output(render):
    """What `render()` returns, or None when it raises (the template uses something the
    engine lacks)."""
    try:
        return render()
    except Exception:  # any engine error: the column says the engine did not run
        return None


def check_chatplate(cases):
    out = subprocess.run([str(CHATPLATE), "check", str(OUT), "--template-root", str(TEMPLATES)],
                         capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()


def run_measured(command):
    """Wall time, peak RSS (KB, of the largest process of the command's tree) and output.

    Measured through GNU time: Linux keeps a process's peak RSS across exec, so a child
    forked from this Python process (transformers loaded) would report Python's."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    return elapsed, int(done.stderr.strip().splitlines()[-1]), done.stdout


def corpus_python(directory):
    """Renders every imported corpus fixture with transformers; prints fixtures and matches."""
    ctu.datetime = FixedClock
    total = matched = 0
    start = time.perf_counter()
    for path in sorted(Path(directory).rglob("*.json")):
        fixture = json.loads(path.read_text())
        if not isinstance(fixture, dict) or "template" not in fixture:
            continue
        total += 1
        source = (path.parent / fixture["template"]["path"]).read_text()
        tokens = {k: fixture[k] for k in ("bos_token", "eos_token") if k in fixture}
        try:
            prompt = ctu.render_jinja_template(
                conversations=[fixture["messages"]], tools=fixture.get("tools"), documents=fixture.get("documents"),
                chat_template=source, add_generation_prompt=fixture.get("add_generation_prompt", False),
                continue_final_message=fixture.get("continue_final_message", False),
                **tokens, **fixture.get("variables", {}))[0][0]
            matched += fixture["expected"].get("prompt") == prompt
        except Exception:
            matched += "error" in fixture["expected"]
    print(f"{total} {matched} {time.perf_counter() - start}")


def check_throughput(rounds):
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run([str(CHATPLATE), "import-corpus", str(CORPUS), directory], check=True, capture_output=True)
        ours, theirs = [], []
        for _ in range(rounds):
            ours.append(run_measured([str(CHATPLATE), "check", directory]))
            theirs.append(run_measured([sys.executable, __file__, "--corpus-python", directory]))
    count, matched, _ = theirs[-1][2].split()
    count, matched = int(count), int(matched)
    summary = ours[-1][2].strip().splitlines()[-1]
    our_time = statistics.median(t for t, _, _ in ours)
    # The Python figure is its render loop only (importing transformers takes seconds).
    their_time = statistics.median(float(out.split()[2]) for _, _, out in theirs)
    return [
        f"| `chatplate check`, {count} corpus fixtures ({summary}) | {our_time:.3f} s, {count / our_time:,.0f} fixtures/s "
        f"| peak RSS {max(r for _, r, _ in ours) / 1024:.0f} MB |",
        f"| transformers `render_jinja_template` on the same fixtures, one process, render loop only ({matched}/{count} as expected) "
        f"| {their_time:.3f} s, {count / their_time:,.0f} fixtures/s | peak RSS {max(r for _, r, _ in theirs) / 1024:.0f} MB |",
        f"| ratio (median of {rounds} interleaved runs) | {their_time / our_time:.1f}x | "
        f"{max(r for _, r, _ in theirs) / max(r for _, r, _ in ours):.1f}x less peak RSS |",
    ]


def load_average():
    """The 1-minute load average (BENCHMARKS.md publishes figures only below 1.5)."""
    return float(Path("/proc/loadavg").read_text().split()[0])


def machine_line(load_before, load_after):
    quiet = "quiet" if max(load_before, load_after) < 1.5 else "NOT QUIET: do not publish"
    return (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores, "
            f"release build; load average (1 min) {load_before:.2f} before and {load_after:.2f} after ({quiet}).")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--slow", type=float, default=10.0, help="seconds: one Python round only above this")
    parser.add_argument("--skip", default="", help="cases to leave out, e.g. Gemma-4:10000 (its transformers render takes minutes)")
    parser.add_argument("--check-only", action="store_true", help="only the corpus check comparison")
    parser.add_argument("--corpus-python", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.corpus_python:
        return corpus_python(args.corpus_python)
    if args.check_only:
        return print("\n".join(["| Corpus check | Time | Memory |", "|---|---:|---:|", *check_throughput(args.rounds)]))
    load_before = load_average()
    if load_before >= 1.5:
        print(f"load average {load_before:.2f}: the figures will not be publishable (BENCHMARKS.md)", file=sys.stderr)
    ctu.datetime = FixedClock
    OUT.mkdir(parents=True, exist_ok=True)
    for old in [*OUT.glob("*.json"), *OUT.glob("*.hf-jinja-input")]:
        old.unlink()
    skip = set(filter(None, args.skip.split(",")))
    cases = [Case(m, int(n)) for m in args.models.split(",") for n in args.sizes.split(",") if f"{m}:{n}" not in skip]
    identical = {}
    for case in cases:
        start = time.perf_counter()
        expected = case.transformers()
        case.python_single = time.perf_counter() - start
        case.write_fixture(expected)
        identical[id(case)] = case.jinja2() == expected
        case.mini_works = case.mini is not None and engine_output(case.minijinja_py) is not None
        identical[(id(case), "minijinja")] = case.mini_works and engine_output(case.minijinja_py) == expected
        hf = case.hf_jinja(1)
        identical[(id(case), "hf_jinja")] = hf is not None and hf[1] == expected
        print(f"{case.model} {case.count}: {len(expected):,} bytes", file=sys.stderr)
    checked = check_chatplate(cases)
    results = run_rounds(cases, args.rounds, args.slow)
    lines = [
        f"Byte identity: `chatplate check` on the {len(cases)} generated fixtures (expected = transformers): {checked}.",
        "",
        "| Template | Messages | chatplate render | compile | transformers warm | cold | plain jinja2 | minijinja-py | @huggingface/jinja "
        "| warm / chatplate | cold / (chatplate compile + render) | jinja2 / chatplate | minijinja-py / chatplate | @huggingface/jinja / chatplate |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for case in cases:
        r = results[id(case)]
        ours = r["chatplate"][:len(r["warm"])]
        with_compile = [a + b for a, b in zip(r["chatplate"], r["compile"])][:len(r["cold"])]
        same = "" if identical[id(case)] else " (output differs)"
        mini_note = "" if identical[(id(case), "minijinja")] else " (output differs)"
        hf_note = "" if identical[(id(case), "hf_jinja")] else " (output differs)"
        lines.append(
            f"| {case.model} | {case.count:,} | {ms(statistics.median(r['chatplate']))} | {ms(statistics.median(r['compile']))} "
            f"| {ms(statistics.median(r['warm']))} | {ms(statistics.median(r['cold']))} | {ms(statistics.median(r['jinja2']))}{same} "
            f"| {median_text(r['minijinja'], mini_note)} | {median_text(r['hf_jinja'], hf_note)} "
            f"| {ratio_text(r['warm'], ours)} | {ratio_text(r['cold'], with_compile)} | {ratio_text(r['jinja2'], ours)} "
            f"| {ratio_text(r['minijinja'], r['chatplate'][:len(r['minijinja'])])} "
            f"| {ratio_text(r['hf_jinja'], r['chatplate'][:len(r['hf_jinja'])])} |")
    lines += ["", "| Corpus check | Time | Memory |", "|---|---:|---:|"]
    lines += check_throughput(min(args.rounds, 5))
    lines = [machine_line(load_before, load_average()), "", *lines]
    table = "\n".join(lines)
    (OUT / "results.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Tokenizer speed, chatplate against Python, in one run on the same prompts.

Runs `cargo bench --bench tokens` (criterion; Llama 3.1's real tokenizer on the rendered
1,000-message prompt and on that prompt twelve times over), then times Python on the same
texts: `tokenizers.Tokenizer.encode(prompt, add_special_tokens=False)` (the Rust core
behind transformers, with its default onig regex) and transformers'
`tokenizer(prompt, add_special_tokens=False)`. Prints the medians and the ratios.

Needs scripts/fetch_tokenizers.sh's cache, ../shared/conformance (the fixture's template)
and a venv with transformers 5.23 (e.g. /work/venv/bin/python scripts/bench_tokens.py).

Usage: python3 scripts/bench_tokens.py [--skip-cargo] [--runs N]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("CHATPLATE_TOKENIZERS", os.path.join(ROOT, "target", "tokenizers"))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "bench", "llama-3.1-1000.json")
CASES = [("llama-3.1-1000", 1), ("llama-3.1-1000x12", 12)]


def rendered_prompt():
    """The fixture's prompt, rendered by chatplate (byte-identical to transformers)."""
    binary = next(
        (p for p in (os.path.join(ROOT, "target", d, "chatplate") for d in ("release", "debug")) if os.path.exists(p)),
        None,
    )
    command = [binary, "render", FIXTURE] if binary else ["cargo", "run", "--quiet", "--", "render", FIXTURE]
    return subprocess.run(command, check=True, capture_output=True, cwd=ROOT).stdout.decode("utf-8")


def criterion_median(group, name):
    path = os.path.join(ROOT, "target", "criterion", group, name, "new", "estimates.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)["median"]["point_estimate"] / 1e9


def python_median(function, text, runs):
    function(text)  # warm up (caches, lazy initialisation)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        function(text)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-cargo", action="store_true", help="reuse the last criterion results")
    parser.add_argument("--runs", type=int, default=20, help="Python timings per case")
    args = parser.parse_args(argv)
    folder = os.path.join(CACHE, "llama3_1")
    if not os.path.exists(os.path.join(folder, "tokenizer.json")):
        print(f"no tokenizer at {folder}: run scripts/fetch_tokenizers.sh", file=sys.stderr)
        return 2
    if not args.skip_cargo:
        subprocess.run(["cargo", "bench", "--bench", "tokens", "--", "--noplot"], check=True, cwd=ROOT)

    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    raw = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    auto = AutoTokenizer.from_pretrained(folder)
    prompt = rendered_prompt()
    print(f"\nprompt: {len(prompt.encode('utf-8'))} bytes, {len(auto(prompt, add_special_tokens=False)['input_ids'])} tokens")
    print(f"{'case':<20} {'chatplate':>10} {'tokenizers':>11} {'transformers':>13} {'tokenizers/chatplate':>21}")
    for name, times in CASES:
        text = prompt * times
        ours = criterion_median("tokenize", name)
        theirs = python_median(lambda t: raw.encode(t, add_special_tokens=False), text, args.runs)
        hf = python_median(lambda t: auto(t, add_special_tokens=False), text, args.runs)
        print(f"{name:<20} {ours * 1e3:>8.1f}ms {theirs * 1e3:>9.1f}ms {hf * 1e3:>11.1f}ms {theirs / ours:>20.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""`response_template` parsing, chatplate against transformers, on the same schema and output.

Runs `cargo bench --bench parse` (criterion; TRL's LFM2.5 schema on
tests/fixtures/bench/lfm2.5-400-calls.txt, 400 tool calls, with the goldens' tools), then
times transformers 5.23's `parse_response` on the same inputs in this process, in CPU time
(`time.process_time`), and prints both medians and their ratio. The schema and tools come
from tests/data/parse/goldens.json (written from TRL 1.16.0 by make_parse_goldens.py).

With --cli BINARY it measures instead, interleaved, the CPU time (user + sys) of whole
`BINARY parse --schema ... --tools ... --response ...` runs, process start and schema
loading included, against transformers' `parse_response` call alone: a comparison that
favours transformers.

Usage: python scripts/bench_parse.py [--skip-cargo] [--runs N] [--cli target/release/chatplate]
Needs: transformers==5.23.0 (no torch).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDENS = os.path.join(ROOT, "tests", "data", "parse", "goldens.json")
OUTPUT = os.path.join(ROOT, "tests", "fixtures", "bench", "lfm2.5-400-calls.txt")


def criterion_median(group, name):
    path = os.path.join(ROOT, "target", "criterion", group, name, "new", "estimates.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)["median"]["point_estimate"] / 1e9


def python_median(function, runs):
    function()  # warm up: the regex module's cache, lazy imports
    samples = []
    for _ in range(runs):
        started = time.process_time()
        function()
        samples.append(time.process_time() - started)
    return statistics.median(samples)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-cargo", action="store_true", help="reuse the last criterion results")
    parser.add_argument("--runs", type=int, default=30, help="Python timings")
    parser.add_argument("--cli", help="a chatplate binary to time, interleaved with transformers")
    args = parser.parse_args(argv)
    if args.cli:
        return compare_cli(args.cli, args.runs)
    if not args.skip_cargo:
        subprocess.run(["cargo", "bench", "--bench", "parse", "--", "parse/lfm2.5"], check=True, cwd=ROOT)
    from transformers.utils.chat_parsing import parse_response

    goldens = json.load(open(GOLDENS, encoding="utf-8"))
    schema = goldens["schemas"]["trl/lfm2_2_5"]["schema"]
    tools = goldens["tools"]
    output = open(OUTPUT, encoding="utf-8").read()
    message = parse_response(output, schema, prefix="", tools=tools)
    assert len(message["tool_calls"]) == 400
    python = python_median(lambda: parse_response(output, schema, prefix="", tools=tools), args.runs)
    chatplate = criterion_median("parse", "lfm2.5-400-calls")
    print(f"lfm2.5-400-calls: chatplate {chatplate * 1e3:.2f} ms, transformers {python * 1e3:.2f} ms "
          f"(CPU), chatplate/transformers {chatplate / python:.2f}; load: {os.getloadavg()[0]:.2f}")


def compare_cli(binary, runs):
    """Median CPU of whole `chatplate parse` runs against transformers' parse, interleaved."""
    import resource
    import tempfile

    from transformers.utils.chat_parsing import parse_response

    goldens = json.load(open(GOLDENS, encoding="utf-8"))
    schema = goldens["schemas"]["trl/lfm2_2_5"]["schema"]
    tools = goldens["tools"]
    output = open(OUTPUT, encoding="utf-8").read()
    with tempfile.TemporaryDirectory() as folder:
        schema_file = os.path.join(folder, "schema.json")
        tools_file = os.path.join(folder, "tools.json")
        json.dump(schema, open(schema_file, "w"))
        json.dump(tools, open(tools_file, "w"))
        command = [binary, "parse", "--schema", schema_file, "--tools", tools_file, "--response", OUTPUT]
        ours = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
        assert ours == parse_response(output, schema, prefix="", tools=tools), "the messages differ"
        cli, python = [], []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(command, check=True, capture_output=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cli.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            started = time.process_time()
            parse_response(output, schema, prefix="", tools=tools)
            python.append(time.process_time() - started)
    ours, theirs = statistics.median(cli), statistics.median(python)
    print(f"lfm2.5-400-calls, CPU medians of {runs}: chatplate parse (whole process) {ours * 1e3:.1f} ms, "
          f"transformers parse_response {theirs * 1e3:.1f} ms, ratio {ours / theirs:.2f}; "
          f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Writes tests/data/parse/stream_goldens.json: transformers 5.23's streaming
`ResponseParser` over the outputs of the whole-output goldens (tests/data/parse/goldens.json,
written by scripts/make_parse_goldens.py), each fed in several chunkings, plus cases of its
own for `tools=` casting, `prefix=` and the failure classes of streamed tool calls.
crates/core/tests/conformance/stream_goldens.rs replays every case and chunking through
chatplate's `ResponseParser` and compares every event and the final message.

A chunking is a list of cut points, in characters of the response: the chunks are the
text between consecutive cuts. Chunkings: whole, every 1, 3 and 7 characters, at the
token boundaries of Qwen3's tokenizer (target/tokenizers/qwen3/tokenizer.json, fetched by
scripts/fetch_tokenizers.sh), and two random splits with fixed seeds.

Also writes tests/data/parse/cli_chunks.json: `chatplate parse --chunks` on the docs'
Qwen example, checked by tests/cli/parse_stream_cli.rs.

Each result: `events` as [call, event] pairs (call 0: the prefix's initial_events, 1..n:
each feed, n+1: finalize), then `message`, or `error` {class, message, call} for what a
call raised (that call's events are lost, as they are in Python).

Usage:
  python scripts/make_stream_goldens.py [--check]   (--check: compare, write nothing)
Needs: transformers==5.23.0 and tokenizers (no torch).
"""
import argparse
import json
import random
import sys
from pathlib import Path

import transformers
from tokenizers import Tokenizer
from transformers.utils.chat_parsing import ResponseParser

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "parse"
WHOLE = DATA / "goldens.json"
OUT = DATA / "stream_goldens.json"
# `chatplate parse --chunks` on the docs' example, as transformers streams it.
CLI_OUT = DATA / "cli_chunks.json"
TOKENIZER = ROOT / "target" / "tokenizers" / "qwen3" / "tokenizer.json"

# Longer outputs (the hostile patterns' thousands of characters) are fed whole, by
# tokens and by random splits only: one character at a time they add nothing but time.
LONG = 400

Q = "<|im_start|>user\nWrite it.<|im_end|>\n<|im_start|>assistant\n"
WRITE_TOOL = [{"type": "function", "function": {"name": "write", "parameters": {
    "type": "object", "properties": {"text": {"type": "string"}, "append": {"type": "boolean"}}}}}]

# Cases of our own: (id, schema id in the whole goldens or an inline schema, prefix,
# response, tools).
EXTRA = [
    # `</tool_call>` inside a JSON argument: the close fires inside the string, as whole.
    ("failure/close-marker-in-json-argument", "transformers/qwen2", Q,
     '<tool_call>\n{"name": "write", "arguments": {"text": "end with </tool_call> here"}}\n</tool_call><|im_end|>', WRITE_TOOL),
    ("failure/close-marker-in-json-argument-trl", "trl/qwen3", Q,
     '<tool_call>\n{"name": "write", "arguments": {"text": "a</tool_call>b"}}\n</tool_call><|im_end|>', WRITE_TOOL),
    ("failure/close-marker-in-xml-parameter", "transformers/qwen3_5", Q,
     "<tool_call>\n<function=write>\n<parameter=text>\nsay </tool_call> twice\n</parameter>\n</function>\n</tool_call><|im_end|>", WRITE_TOOL),
    # Content that starts with `{` where a JSON tool call may also start.
    ("failure/content-starting-with-brace", "chatplate/llama-3.1-json",
     "<|start_header_id|>assistant<|end_header_id|>\n\n", '{"name" is a key, {braces} are fine}<|eot_id|>', False),
    ("failure/content-starting-with-brace-llama3", "trl/llama3",
     "<|start_header_id|>assistant<|end_header_id|>\n\n", '{"name": "x"} is JSON<|eot_id|>', False),
    ("failure/content-starting-with-brace-hermes", "transformers/qwen2", Q, '{"answer": 42}<|im_end|>', False),
    # Two calls back to back: a chunk that spans both markers.
    ("failure/two-calls-no-gap", "trl/qwen3", Q,
     '<tool_call>\n{"name": "write", "arguments": {"text": "a"}}\n</tool_call><tool_call>\n{"name": "write", "arguments": {"text": "b", "append": "true"}}\n</tool_call><|im_end|>', WRITE_TOOL),
    # prefix=: regions the template opened itself, a region left open by the prefix.
    ("prefix/think-prefill", "trl/qwen3", Q + "<think>\n", "Short.\n</think>\n\nDone.<|im_end|>", False),
    ("prefix/open-call-in-prefix", "trl/qwen3", Q + '<tool_call>\n{"name": "write", ',
     '"arguments": {"text": "x"}}\n</tool_call><|im_end|>', WRITE_TOOL),
    ("prefix/two-anchors-last-wins", "trl/qwen3", Q + "Old.<|im_end|>\n" + Q, "New.<|im_end|>", False),
    ("prefix/anchor-absent", "trl/qwen3", "<think>\nfrom the prefix\n</think>\n", "Answer.<|im_end|>", False),
    ("prefix/marker-split-by-prefix", "trl/qwen3", Q + "<thi", "nk>\nx\n</think>\n\ny<|im_end|>", False),
]

# `tools=` casting: every branch of `_coerce` and of the tool list's shapes.
CAST_SCHEMA = {"start_anchor": "A", "fields": {"tool_calls": {
    "open_pattern": "<c (?P<name>\\w+)>", "close": "</c>", "content": "xml-inline",
    "content_args": {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": True},
    "repeats": True, "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}}}}
CAST_CASES = [
    ("integer", {"type": "integer"}, ["3", " 7 ", "3.0", "3.5", "1_000", "-0", "1e2", "x", "0x10"]),
    ("number", {"type": "number"}, ["2.50", "7", "1e3", "nan", "inf", "-inf", "1_0.5", " 4 ", "x", "1E400"]),
    ("boolean", {"type": "boolean"}, ["true", "True", " FALSE ", "1", "0", "yes", ""]),
    ("null", {"type": "null"}, ["null", "None", " None ", "none", "x"]),
    ("object", {"type": "object"}, ['{"a": 1}', "[1]", "{bad"]),
    ("array", {"type": "array"}, ["[1, 2]", '{"a": 1}', "[", "[true, null]"]),
    ("union", {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, ["5", "true", "maybe"]),
    ("type-list", {"type": ["null", "number"]}, ["None", "2", "x"]),
    ("nullable", {"type": "integer", "nullable": True}, ["None", "4"]),
    ("string", {"type": "string"}, ["5", "true"]),
    ("no-type", {"description": "anything"}, ["5"]),
    ("unknown-type", {"type": "date"}, ["5"]),
]
TOOL_SHAPES = [
    ("bare-function", [{"name": "f", "parameters": {"type": "object", "properties": {"v": {"type": "integer"}}}}]),
    ("parameters-not-dict", [{"type": "function", "function": {"name": "f", "parameters": [1]}}]),
    ("properties-not-dict", [{"type": "function", "function": {"name": "f", "parameters": {"properties": 3}}}]),
    ("name-not-str", [{"type": "function", "function": {"name": 3, "parameters": {"properties": {"v": {"type": "integer"}}}}}]),
    ("not-a-dict", ["f", 3, None]),
    ("other-tool", [{"type": "function", "function": {"name": "g", "parameters": {"properties": {"v": {"type": "integer"}}}}}]),
    ("later-duplicate-wins", [
        {"type": "function", "function": {"name": "f", "parameters": {"properties": {"v": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "f", "parameters": {"properties": {"v": {"type": "boolean"}}}}}]),
]


def cast_cases():
    cases = []
    for label, schema, raws in CAST_CASES:
        tools = [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"v": schema, "w": schema}}}}]
        body = "".join(f"<v>{raw}</v>" for raw in raws)
        # merge_duplicates turns repeated keys into a list: each item cast on its own.
        cases.append((f"cast/{label}", CAST_SCHEMA, "", f"<c f>{body}<w>{raws[0]}</w></c>", tools))
    for label, tools in TOOL_SHAPES:
        cases.append((f"cast/tools-{label}", CAST_SCHEMA, "", "<c f><v>3</v></c>", tools))
    return cases


def chunkings(text, tokenizer):
    n = len(text)
    out = {"whole": [0, n]}
    if n <= LONG:
        for size in (1, 3, 7):
            out[f"every-{size}"] = sorted(set(list(range(0, n, size)) + [n]))
    offsets = tokenizer.encode(text, add_special_tokens=False).offsets
    out["tokens"] = sorted({0, n} | {start for start, _ in offsets if 0 < start < n})
    for seed in (1, 2):
        rng = random.Random(seed * 7919 + n)
        cuts, at = [0], 0
        while at < n:
            at = min(n, at + rng.randint(1, 9))
            cuts.append(at)
        out[f"random-{seed}"] = cuts
    return out


def error(exc, call):
    return {"class": type(exc).__name__, "message": str(exc), "call": call}


def stream(schema, prefix, response, tools, cuts):
    events = []
    try:
        parser = ResponseParser(schema, prefix=prefix, tools=tools)
    except Exception as exc:  # the class and message are the golden
        return {"events": events, "error": error(exc, 0)}
    events += [[0, json.loads(json.dumps(e))] for e in parser.initial_events]
    call = 0
    try:
        for call, (a, b) in enumerate(zip(cuts, cuts[1:]), start=1):
            events += [[call, json.loads(json.dumps(e))] for e in parser.feed(response[a:b])]
        call += 1
        message, final = parser.finalize()
    except Exception as exc:
        return {"events": events, "error": error(exc, call)}
    events += [[call, json.loads(json.dumps(e))] for e in final]
    return {"events": events, "message": message}


def build():
    whole = json.loads(WHOLE.read_text())
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    schemas = dict(whole["schemas"])
    inputs = []
    for case in whole["cases"]:
        own = case["tools"]
        tools = whole["tools"] if own is True else (own if isinstance(own, list) else None)
        inputs.append((case["id"], case["schema"], case["prefix"], case["response"], tools, case["tools"]))
    for case_id, schema, prefix, response, tools in EXTRA + cast_cases():
        if isinstance(schema, dict):
            schemas[f"stream/{case_id}"] = {"source": "scripts/make_stream_goldens.py", "schema": schema}
            schema = f"stream/{case_id}"
        inputs.append((f"stream/{case_id}", schema, prefix, response, tools or None, tools or False))
    cases = []
    for case_id, schema_id, prefix, response, tools, tools_field in inputs:
        schema = schemas[schema_id]["schema"]
        results = {}
        for name, cuts in chunkings(response, tokenizer).items():
            results[name] = {"cuts": cuts, **stream(schema, prefix, response, tools, cuts)}
        cases.append({"id": case_id, "schema": schema_id, "prefix": prefix, "response": response,
                      "tools": tools_field, "chunkings": results})
    used = {c["schema"] for c in cases}
    return {"generated_by": f"scripts/make_stream_goldens.py with transformers {transformers.__version__}",
            "tools": whole["tools"], "schemas": {k: v for k, v in schemas.items() if k in used},
            "cases": cases}


def cli_goldens():
    """The docs' Qwen example (docs/examples/qwen-output.txt with its schema and tools),
    every 7 bytes (ASCII: 7 characters) and at Qwen3's token boundaries, as the lines
    `chatplate parse --chunks` prints: each event, then the message."""
    examples = ROOT / "docs" / "examples"
    text = (examples / "qwen-output.txt").read_text()
    assert text.isascii()
    schema = json.loads((examples / "qwen-response-template.json").read_text())
    tools = json.loads((examples / "weather-tools.json").read_text())
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    out = {}
    for name, cuts in chunkings(text, tokenizer).items():
        if name not in ("every-7", "tokens"):
            continue
        run = stream(schema, "", text, tools, cuts)
        out[name] = [event for _, event in run["events"]] + [run["message"]]
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true", help="compare with the committed goldens")
    args = parser.parse_args()
    if transformers.__version__ != "5.23.0":
        sys.exit(f"transformers 5.23.0 is the reference; this is {transformers.__version__}")
    goldens = build()
    cli = json.dumps(cli_goldens(), ensure_ascii=False, indent=1) + "\n"
    # NaN has no JSON spelling (chatplate writes null, docs/parse.md): none in the goldens.
    text = json.dumps(goldens, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    runs = sum(len(c["chunkings"]) for c in goldens["cases"])
    if args.check:
        if OUT.read_text() != text or CLI_OUT.read_text() != cli:
            sys.exit(f"{OUT} differs from what transformers gives now: run scripts/make_stream_goldens.py")
        print(f"{OUT}: {len(goldens['cases'])} cases, {runs} chunkings match transformers")
        return
    OUT.write_text(text)
    CLI_OUT.write_text(cli)
    print(f"wrote {OUT}: {len(goldens['cases'])} cases, {runs} chunkings ({len(text)} bytes)")


if __name__ == "__main__":
    main()

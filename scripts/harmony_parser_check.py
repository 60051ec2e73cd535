#!/usr/bin/env python3
"""Runs openai-harmony's own streaming parser (`StreamableParser`, the one vLLM uses for
gpt-oss) over the harmony outputs of tests/data/parse/goldens.json, token by token, and
prints its messages beside what transformers 5.23 gives with TRL's gpt-oss schema and with
ours (tests/data/parse/schemas/gpt-oss-harmony.json). docs/parse.md ("Other engines' parsers")
reports the result.

openai-harmony downloads its vocabulary when it loads; where that is not possible, this
writes o200k_base.tiktoken from gpt-oss's own tokenizer.json (the same byte-level tokens,
same ranks) into DIR and points TIKTOKEN_ENCODINGS_BASE at it.

Usage:
  python -m venv /tmp/harmony && /tmp/harmony/bin/pip install openai-harmony==0.0.8
  /tmp/harmony/bin/python scripts/harmony_parser_check.py [--vocab-dir DIR]
Needs target/tokenizers/gptoss/tokenizer.json (scripts/fetch_tokenizers.sh).
"""
import argparse
import base64
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_vocab(folder):
    """o200k_base.tiktoken (base64 token bytes, rank) from the GPT-2 byte-level vocab."""
    tok = json.loads((ROOT / "target/tokenizers/gptoss/tokenizer.json").read_text())
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = printable[:], 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    to_byte = {chr(c): b for b, c in zip(printable, chars)}
    lines = []
    for token, rank in sorted(tok["model"]["vocab"].items(), key=lambda item: item[1]):
        if all(ch in to_byte for ch in token):
            lines.append(f"{base64.b64encode(bytes(to_byte[ch] for ch in token)).decode()} {rank}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "o200k_base.tiktoken").write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab-dir", default="/tmp/harmony-vocab")
    args = parser.parse_args()
    folder = Path(args.vocab_dir)
    if not (folder / "o200k_base.tiktoken").exists():
        write_vocab(folder)
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(folder)
    from openai_harmony import HarmonyEncodingName, Role, StreamableParser, load_harmony_encoding
    encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    goldens = json.loads((ROOT / "tests/data/parse/goldens.json").read_text())
    cases = {c["id"]: c for c in goldens["cases"]}
    for case_id, case in cases.items():
        if not case_id.startswith("trl/gptoss:harmony:"):
            continue
        label = case_id.rsplit(":", 1)[1]
        stream = StreamableParser(encoding, role=Role.ASSISTANT)
        for token in encoding.encode(case["response"], allowed_special="all"):
            stream.process(token)
        stream.process_eos()
        found = [{"channel": m.channel, "recipient": m.recipient,
                  "text": "".join(part.text for part in m.content)} for m in stream.messages]
        print(f"{label}\n  openai-harmony: {json.dumps(found)}")
        for schema in ("trl/gptoss", "chatplate/gpt-oss-harmony"):
            print(f"  {schema}: {json.dumps(cases[f'{schema}:harmony:{label}']['expected'])}")


if __name__ == "__main__":
    main()

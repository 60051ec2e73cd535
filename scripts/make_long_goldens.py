#!/usr/bin/env python3
"""Writes long-conversation fixtures whose `expected` prompt is transformers' own render:
google-gemma-4-31B-it at 2,000 messages and openai-gpt-oss-120b at 10,000. Both
templates are quadratic in the number of messages, so these are the conversations that
the old fixed step budget refused as "endless loops".

The fixtures are large (several MB) and are not committed: they go to
target/long-goldens/ (or the folder given), where tests/long_conversations.rs finds
them. Each fixture carries its template source inline, so the folder is self-contained.

Needs: pip install transformers==5.23.0 (no torch), and ../shared/conformance.
Usage: python3 scripts/make_long_goldens.py [OUT_DIR]
"""
import json
import sys
import time
from pathlib import Path

import transformers.utils.chat_template_utils as ctu

from long_conversation import CLOCK, TOOLS, FixedClock, conversation

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "conformance" / "dev" / "templates"
CASES = [("google-gemma-4-31B-it", 2000), ("openai-gpt-oss-120b", 10000)]


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "long-goldens"
    out.mkdir(parents=True, exist_ok=True)
    ctu.datetime = FixedClock
    for stem, count in CASES:
        template = (CORPUS / f"{stem}.jinja").read_text()
        meta = json.loads((CORPUS / f"{stem}.json").read_text())
        messages = conversation(count)
        kwargs = {"bos_token": meta["bos_token"], "eos_token": meta["eos_token"], **meta["extra"]}
        started = time.perf_counter()
        # transformers drops top-level None values before rendering; there are none here.
        expected = ctu.render_jinja_template(conversations=[messages], tools=TOOLS, chat_template=template,
                                             add_generation_prompt=True, **kwargs)[0][0]
        seconds = time.perf_counter() - started
        fixture = {"version": 1, "template": {"source": template}, "bos_token": meta["bos_token"],
                   "eos_token": meta["eos_token"], "add_generation_prompt": True, "messages": messages,
                   "tools": TOOLS, "variables": meta["extra"], "clock": CLOCK,
                   "expected": {"prompt": expected}}
        path = out / f"{stem}-{count}.json"
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path}: {count} messages, {len(expected)} chars; transformers took {seconds:.1f} s")


if __name__ == "__main__":
    main()

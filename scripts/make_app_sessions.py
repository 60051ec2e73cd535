#!/usr/bin/env python3
"""Writes long sessions to open in the app when measuring it: Llama 3.1,
Qwen3, Gemma 4, gpt-oss, Nemotron Nano 2 (whose first attribution used to render
every prefix) and Reka Edge (whose prefixes cannot be predicted: attributed on screen
first) at 1,000 and 10,000 messages, the conversation of
long_conversation.py (tool calls carry an empty content, which Qwen3 requires).
`--all` writes every dev template of the corpus instead (as scripts/bench_speed.py
renders them: the tools also under the template's `tools_json_kwarg`), `--sizes` other
sizes (`--all --sizes 10000` is what scripts/measure_app_latency.py --all-templates opens).

No `expected` prompt: these are for the app, not goldens. They are large and are not
committed: they go to target/app-sessions/ (or the folder given).

Needs: ../shared/conformance.
Usage: python3 scripts/make_app_sessions.py [--all] [--sizes 1000,10000] [OUT_DIR]
"""
import argparse
import json
from pathlib import Path

from long_conversation import CLOCK, TOOLS, conversation, template_variables

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "conformance" / "dev" / "templates"
STEMS = ["meta-llama-Llama-3.1-8B-Instruct", "Qwen-Qwen3-0.6B", "google-gemma-4-31B-it",
         "openai-gpt-oss-120b", "NVIDIA-Nemotron-Nano-v2", "Reka-Edge"]


def session(stem, count):
    """The session of template `stem` with `count` messages."""
    template = (CORPUS / f"{stem}.jinja").read_text()
    meta = json.loads((CORPUS / f"{stem}.json").read_text())
    variables = template_variables(meta)
    return {"version": 1, "template": {"source": template}, "bos_token": meta["bos_token"],
            "eos_token": meta["eos_token"], "add_generation_prompt": True,
            "messages": conversation(count, call_content=""), "tools": TOOLS,
            "variables": variables, "clock": CLOCK}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "target" / "app-sessions")
    parser.add_argument("--all", action="store_true", help="every dev template of the corpus")
    parser.add_argument("--sizes", default="1000,10000", help="message counts, comma-separated")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    stems = sorted(p.stem for p in CORPUS.glob("*.jinja")) if args.all else STEMS
    for stem in stems:
        for count in (int(size) for size in args.sizes.split(",")):
            path = args.out / f"{stem}-{count}.json"
            path.write_text(json.dumps(session(stem, count), indent=1, ensure_ascii=False) + "\n")
            print(f"wrote {path}")


if __name__ == "__main__":
    main()

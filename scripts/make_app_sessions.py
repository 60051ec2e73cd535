#!/usr/bin/env python3
"""Writes long sessions to open in the app when measuring it: Llama 3.1,
Qwen3, Gemma 4, gpt-oss, Nemotron Nano 2 (whose first attribution used to render
every prefix) and Reka Edge (whose prefixes cannot be predicted: attributed on screen
first) at 1,000 and 10,000 messages, the conversation of
long_conversation.py (tool calls carry an empty content, which Qwen3 requires).

No `expected` prompt: these are for the app, not goldens. They are large and are not
committed: they go to target/app-sessions/ (or the folder given).

Needs: ../shared/conformance. Usage: python3 scripts/make_app_sessions.py [OUT_DIR]
"""
import json
import sys
from pathlib import Path

from long_conversation import CLOCK, TOOLS, conversation

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "conformance" / "dev" / "templates"
STEMS = ["meta-llama-Llama-3.1-8B-Instruct", "Qwen-Qwen3-0.6B", "google-gemma-4-31B-it",
         "openai-gpt-oss-120b", "NVIDIA-Nemotron-Nano-v2", "Reka-Edge"]


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "app-sessions"
    out.mkdir(parents=True, exist_ok=True)
    for stem in STEMS:
        template = (CORPUS / f"{stem}.jinja").read_text()
        meta = json.loads((CORPUS / f"{stem}.json").read_text())
        for count in (1000, 10000):
            session = {"version": 1, "template": {"source": template}, "bos_token": meta["bos_token"],
                       "eos_token": meta["eos_token"], "add_generation_prompt": True,
                       "messages": conversation(count, call_content=""), "tools": TOOLS,
                       "variables": meta["extra"], "clock": CLOCK}
            path = out / f"{stem}-{count}.json"
            path.write_text(json.dumps(session, indent=1, ensure_ascii=False) + "\n")
            print(f"wrote {path}")


if __name__ == "__main__":
    main()

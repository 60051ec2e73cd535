#!/usr/bin/env python3
"""Goldens for the kinds of input the dev corpus lacks, from the reference, transformers 5.23.

The dev corpus (../shared/conformance/dev) renders plain string contents, no documents and
never continues a final message. This script renders a few real templates of that corpus
with scenarios that do: a message `content` given as a JSON object, retrieval `documents`,
and `continue_final_message`, both where it works (text, text parts, trailing space) and
where transformers raises (a final message the template rewrites, a content that is not
text, with `add_generation_prompt`). Each case is rendered exactly as the corpus's gen.py
renders its own: `apply_chat_template(..., tokenize=False)` on a tokenizer without special
tokens, the fixed clock, the template's `bos_token`/`eos_token`/extras.

The result, tests/fixtures/input-corpus/goldens.json, holds the scenarios and, per case,
transformers' prompt or its exception (`error_type` as gen.py writes it, and the full
`str(exception)`). crates/core/tests/conformance/input_corpus.rs lays it out as a corpus
beside the dev corpus's templates, imports it with `import-corpus` and checks every case.

Usage: python3 scripts/make_input_goldens.py [--check]
With --check nothing is written: exit 1 when the committed goldens differ from what
transformers gives now.
"""

import copy
import datetime as _dt
import json
import os
import sys

import transformers.utils.chat_template_utils as ctu
from tokenizers import Tokenizer, models
from transformers import PreTrainedTokenizerFast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.environ.get("CHATPLATE_CORPUS", os.path.join(ROOT, "..", "shared", "conformance", "dev"))
OUT = os.path.join(ROOT, "tests", "fixtures", "input-corpus", "goldens.json")


class FixedClock(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        fixed = _dt.datetime(2026, 1, 15, 0, 0, 0)
        return fixed if tz is None else fixed.replace(tzinfo=tz)


ctu.datetime = FixedClock
TOK = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")))
assert TOK.special_tokens_map == {}, TOK.special_tokens_map

# Templates of the dev corpus: the four that read `documents`, three that rewrite an
# assistant's reasoning (so a continued message can vanish), and common chat formats.
TEMPLATES = [
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use",
    "ibm-granite-granite-3.3-2B-Instruct",
    "ibm-granite-granite-4.0",
    "ibm-granite-granite-4.1",
    "Qwen-Qwen3-0.6B",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
    "HuggingFaceTB-SmolLM3-3B",
    "meta-llama-Llama-3.1-8B-Instruct",
    "mistralai-Mistral-Nemo-Instruct-2407",
    "google-gemma-2-2b-it",
    "microsoft-Phi-3.5-mini-instruct",
    "Qwen-Qwen2.5-7B-Instruct",
    "moonshotai-Kimi-K2",
    "openai-gpt-oss-120b",
]

HAIKU = {"role": "user", "content": "Write a haiku about autumn."}
SCENARIOS = {
    "object_content": {
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": {"text": "What is 2+2?", "lang": "en"}},
        ],
        "add_generation_prompt": True,
    },
    "object_content_history": {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": {"text": "Hello", "tone": "warm"}},
            {"role": "user", "content": "Bye"},
        ],
        "add_generation_prompt": True,
    },
    "documents": {
        "messages": [{"role": "user", "content": "What does the report say?"}],
        "documents": [
            {"title": "Report", "text": "Sales rose 5% in Q3."},
            {"title": "Memo", "text": "The meeting moved to 3 pm."},
        ],
        "add_generation_prompt": True,
    },
    "continue_text": {
        "messages": [HAIKU, {"role": "assistant", "content": "Crimson leaves falling"}],
        "continue_final_message": True,
    },
    "continue_trailing_space": {
        "messages": [HAIKU, {"role": "assistant", "content": "Crimson leaves "}],
        "continue_final_message": True,
    },
    "continue_parts": {
        "messages": [HAIKU, {"role": "assistant", "content": [{"type": "text", "text": "Crimson leaves falling"}]}],
        "continue_final_message": True,
    },
    "continue_after_reasoning": {
        "messages": [HAIKU, {"role": "assistant", "content": "<think>Five syllables first.</think>Crimson leaves"}],
        "continue_final_message": True,
    },
    "continue_object": {
        "messages": [HAIKU, {"role": "assistant", "content": {"text": "Crimson"}}],
        "continue_final_message": True,
    },
    "continue_with_generation_prompt": {
        "messages": [HAIKU, {"role": "assistant", "content": "Crimson leaves"}],
        "continue_final_message": True,
        "add_generation_prompt": True,
    },
}


def read(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def kwargs_for(meta, scenario):
    kwargs = {"bos_token": meta["bos_token"], "eos_token": meta["eos_token"], **(meta.get("extra") or {})}
    if meta.get("tools_json_kwarg"):
        tools = scenario.get("tools") or []
        kwargs[meta["tools_json_kwarg"]] = json.dumps([t.get("function", t) for t in tools], indent=4, ensure_ascii=False)
    return kwargs


def case(stem, name, scenario):
    source = read(os.path.join(CORPUS, "templates", f"{stem}.jinja"))
    meta = json.loads(read(os.path.join(CORPUS, "templates", f"{stem}.json")))
    kwargs = kwargs_for(meta, scenario)
    out = {"template": stem, "scenario": name, "template_kwargs": kwargs}
    try:
        prompt = TOK.apply_chat_template(
            copy.deepcopy(scenario["messages"]),
            tools=copy.deepcopy(scenario.get("tools")),
            documents=copy.deepcopy(scenario.get("documents")),
            chat_template=source,
            tokenize=False,
            add_generation_prompt=scenario.get("add_generation_prompt", False),
            continue_final_message=scenario.get("continue_final_message", False),
            **copy.deepcopy(kwargs),
        )
        out.update(outcome="ok", expected=prompt)
    except Exception as err:  # the reference's exception is the golden
        out.update(outcome="error", error_type=f"{type(err).__module__}.{type(err).__qualname__}",
                   error_message=str(err))
    return out


def main():
    check = "--check" in sys.argv[1:]
    cases = [case(stem, name, scenario) for stem in TEMPLATES for name, scenario in SCENARIOS.items()]
    body = {"reference": "transformers 5.23.0 apply_chat_template(tokenize=False), as the corpus's gen.py",
            "scenarios": SCENARIOS}
    # One case per line: reviewable diffs.
    text = json.dumps(body, ensure_ascii=False, indent=1)[:-2] + ',\n "cases": [\n'
    text += ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n]}\n"
    errors = sum(c["outcome"] == "error" for c in cases)
    summary = f"{len(cases)} cases ({errors} errors), {len(text.encode())} bytes"
    if check:
        same = os.path.exists(OUT) and read(OUT) == text
        print(f"{summary}: goldens {'current' if same else 'DIFFER'}")
        sys.exit(0 if same else 1)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    print(f"wrote {OUT}: {summary}")


if __name__ == "__main__":
    main()

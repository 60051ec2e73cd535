#!/usr/bin/env python3
"""Writes tests/data/roundtrip/goldens.json: token identity as transformers 5.23 gives it,
for `chatplate roundtrip` (tests/cli/roundtrip_cli.rs runs chatplate on every case and
compares).

Each case is a conversation before the output, a model's raw output (and, for some, the
token ids the model sampled), a template of the conformance corpus and a response schema
of tests/data/parse/goldens.json. transformers renders the prompt with the generation
prompt, parses the output (`parse_response(output, schema, prefix=prompt, tools=TOOLS)`),
renders the conversation with the parsed message and tokenizes both with the real
tokenizer; the golden is the first token where `tokenizer(prompt) + sampled` and
`tokenizer(re-render)` differ (its index from the output's first token, negative in the
prompt, and both ids and token strings), or `identical` with the number of sampled tokens.

Usage:
  $CHATPLATE_PYTHON scripts/make_roundtrip_goldens.py [--check]   (--check: compare, write nothing)
Needs: transformers==5.23.0 (no torch), the conformance corpus ($CHATPLATE_CORPUS, else
../shared/conformance/dev), the qwen3 tokenizer (scripts/fetch_tokenizers.sh).
"""
import argparse
import json
import os
import sys
from pathlib import Path

import transformers
from transformers import AutoTokenizer
from transformers.utils.chat_parsing import parse_response

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "roundtrip" / "goldens.json"
PARSE = ROOT / "tests" / "data" / "parse" / "goldens.json"
CORPUS = Path(os.environ.get("CHATPLATE_CORPUS", ROOT.parent / "shared" / "conformance" / "dev"))
TOKENIZERS = Path(os.environ.get("CHATPLATE_TOKENIZERS", ROOT / "target" / "tokenizers"))
TOKENIZER = "qwen3"

WEATHER = [{"role": "user", "content": "Weather in Paris?"}]
ALARM = [{"role": "user", "content": "Wake me at 7, but keep the alarm off for now."}]
Q25 = ("Qwen-Qwen2.5-7B-Instruct.jinja", "transformers/qwen2")
Q35 = ("Qwen3.5-4B.jinja", "transformers/qwen3_5")
# A plain-text template whose generation prompt ends with a space (no corpus template
# shows a merge that the parse keeps the text of), with its schema.
PLAIN = ("inline:plain", "inline:plain")
INLINE_TEMPLATES = {
    "plain": "{% for m in messages %}{{ m.role | capitalize }}: {{ m.content }}\n\n{% endfor %}"
             "{% if add_generation_prompt %}Assistant: {% endif %}",
}
INLINE_SCHEMAS = {
    "plain": {"defaults": {"role": "assistant"}, "start_anchor": "Assistant: ", "fields": {"content": {}}},
}

# (id, (template, schema), messages, output, how to make the sampled ids: None for the
# output as the tokenizer splits it, else a list of text pieces each tokenized alone).
CASES = [
    ("clean-call", Q25, WEATHER,
     '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call><|im_end|>', None),
    ("json-spacing", Q25, WEATHER,
     '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n</tool_call><|im_end|>', None),
    ("empty-think", Q25, WEATHER, "<think>\n\n</think>\n\nSunny.<|im_end|>", None),
    ("leading-newline", Q25, WEATHER, "\nSunny.<|im_end|>", None),
    ("boundary-merge", PLAIN, WEATHER, "Sunny.", None),
    ("retokenized", Q25, WEATHER, "Sunny.<|im_end|>", ["Sun", "ny", ".", "<|im_end|>"]),
    ("qwen35-clean", Q35, ALARM,
     "The user wants an alarm at 7.\n</think>\n\n<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n</function>\n</tool_call><|im_end|>", None),
    ("qwen35-false", Q35, ALARM,
     "The user wants an alarm at 7, off.\n</think>\n\n<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n<parameter=enabled>\nfalse\n</parameter>\n</function>\n</tool_call><|im_end|>", None),
]


def tokens(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def case(tokenizer, tools, schemas, label, pair, messages, output, pieces):
    template_name, schema_id = pair
    template = (INLINE_TEMPLATES[template_name[len("inline:"):]] if template_name.startswith("inline:")
                else (CORPUS / "templates" / template_name).read_text())
    schema = (INLINE_SCHEMAS[schema_id[len("inline:"):]] if schema_id.startswith("inline:")
              else schemas[schema_id]["schema"])
    render = lambda msgs, gen: tokenizer.apply_chat_template(
        msgs, tools=tools, chat_template=template, add_generation_prompt=gen, tokenize=False)
    prompt = render(messages, True)
    sampled = tokens(tokenizer, output) if pieces is None else [i for p in pieces for i in tokens(tokenizer, p)]
    assert tokenizer.decode(sampled) == output, label
    parsed = parse_response(output, schema, prefix=prompt, tools=tools)
    rendered = render(messages + [parsed], False)
    expected = tokens(tokenizer, prompt) + sampled
    got = tokens(tokenizer, rendered)
    at = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), None)
    if at is None and len(got) < len(expected):
        at = len(got)
    entry = {"id": label, "template": template_name, "schema": schema_id}
    if template_name.startswith("inline:"):
        entry.update(template_source=template, schema_source=schema)
    entry.update({"messages": messages,
             "output": output})
    if pieces is not None:
        entry["ids"] = sampled
    entry["parsed"] = parsed
    if at is None:
        entry["expected"] = {"identical": True, "tokens": len(sampled)}
        return entry
    shown = lambda i: {"id": i, "token": tokenizer.convert_ids_to_tokens(i)}
    entry["expected"] = {
        "identical": False,
        "index": at - len(tokens(tokenizer, prompt)),
        "sampled": shown(expected[at]),
        "rendered": shown(got[at]) if at < len(got) else None,
    }
    return entry


def build():
    parse_goldens = json.loads(PARSE.read_text())
    tokenizer = AutoTokenizer.from_pretrained(str(TOKENIZERS / TOKENIZER))
    tools = parse_goldens["tools"]
    cases = [case(tokenizer, tools, parse_goldens["schemas"], *c) for c in CASES]
    return {"generated_by": f"scripts/make_roundtrip_goldens.py with transformers {transformers.__version__}",
            "tokenizer": TOKENIZER, "cases": cases}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the file, write nothing")
    args = parser.parse_args()
    data = build()
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        if OUT.read_text() != text:
            sys.exit(f"{OUT} differs from what transformers gives now: rerun without --check")
        print(f"{OUT.relative_to(ROOT)}: {len(data['cases'])} cases agree")
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(data['cases'])} cases")


if __name__ == "__main__":
    main()

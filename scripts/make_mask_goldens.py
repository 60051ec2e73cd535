#!/usr/bin/env python3
"""Assistant-mask goldens from the reference, transformers 5.23.

For every case below (a chat template with `{% generation %}` blocks and a conversation) this
records what transformers computes:

* `prompt` and `spans`: `render_jinja_template(..., return_assistant_tokens_mask=True)`, the
  rendered prompt and its `generation_indices` (character ranges);
* `masks[name]`: for each real tokenizer folder (scripts/fetch_tokenizers.sh), the
  `assistant_masks` of `tok.apply_chat_template(messages, tokenize=True, return_dict=True,
  return_assistant_tokens_mask=True)`, or `{"error": "Class: message"}` when it raises.

Cases: two training templates written for chatplate the way TRL's training templates are
made (tests/fixtures/masks/qwen3-training.jinja, llama3.1-training.jinja), the corpus's
LFM2.5 template (which ships its own markers), and small templates for the edge cases (spans
at character 0, ending in token 0, empty, nested, adjacent, in a macro, in a discarded
`{% set %}` block, straddling tokens, ending on whitespace merged into the next token,
whitespace control around the tags, `{%+ generation %}` (which transformers' tag test misses but
records), an end-of-turn marker after a space, non-ASCII text).

`bos_token` and `eos_token` are passed explicitly, so the prompt is the same for every
tokenizer. Writes tests/fixtures/masks/goldens.json (crates/core/tests/conformance/masks.rs
reads it).

Usage: python3 scripts/make_mask_goldens.py [--check] [TOKENIZER_DIR ...]
With --check nothing is written: exit 1 when the committed goldens differ from what
transformers gives now (CI runs this).
"""

import glob
import json
import os
import sys

from transformers import AutoTokenizer
from transformers.utils.chat_template_utils import render_jinja_template

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "masks")
CORPUS = os.environ.get("CHATPLATE_CORPUS", os.path.join(ROOT, "..", "shared", "conformance", "dev"))
CACHE = os.environ.get("CHATPLATE_TOKENIZERS", os.path.join(ROOT, "target", "tokenizers"))
KWARGS = {"bos_token": "<|begin_of_text|>", "eos_token": "<|im_end|>"}

CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Say hi in German."},
    {"role": "assistant", "content": "Grüße! 😀"},
    {"role": "user", "content": "And in Chinese?"},
    {"role": "assistant", "content": "你好\n\n"},
]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
TOOL_CHAT = [
    {"role": "user", "content": "Weather in Paris and Berlin?"},
    {"role": "assistant", "reasoning_content": "Two cities, two calls.", "content": "",
     "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                    {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Berlin"}}}]},
    {"role": "tool", "content": "{\"temp\": 18}"},
    {"role": "tool", "content": "{\"temp\": 15}"},
    {"role": "assistant", "content": "Paris 18 °C, Berlin 15 °C."},
]
SHORT = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello there"}]
LOOP = "{% for m in messages %}"

EDGES = {
    "nested": LOOP + "<{{ m.role }}>{% generation %}A{% generation %}B{{ m.content }}{% endgeneration %}C{% endgeneration %}{% endfor %}",
    "adjacent": LOOP + "{% generation %}{{ m.content }}{% endgeneration %}{% generation %}|{% endgeneration %}{% endfor %}",
    "in-a-macro": "{% macro turn(m) %}[{% generation %}{{ m.content }}{% endgeneration %}]{% endmacro %}" + LOOP + "<{{ m.role }}>{{ turn(m) }}{% endfor %}",
    "in-a-filter-block": LOOP + "<{{ m.role }}>{% filter upper %}[{% generation %}{{ m.content }}{% endgeneration %}]{% endfilter %}{% endfor %}",
    "empty-at-0": "{% generation %}{% endgeneration %}" + LOOP + "{{ m.content }}{% endfor %}",
    "empty-in-the-middle": LOOP + "{{ m.content }}{% generation %}{% endgeneration %}{% endfor %}",
    "at-0": "{% generation %}{{ messages[1].content }}{% endgeneration %} and more text here",
    "ending-in-token-0": "{% generation %}Hello{% endgeneration %} world and more",
    "discarded-in-set-block": LOOP + "{{ m.content }}{% endfor %}{% set x %}{% generation %}0123456789012345678901234567890123456789{% endgeneration %}{% endset %}",
    "empty-at-the-end": LOOP + "{{ m.content }}{% endfor %}{% generation %}{% endgeneration %}{% generation %}x{% endgeneration %}",
    "straddling-tokens": "Hel{% generation %}lo wor{% endgeneration %}ld, {{ messages[1].content }}",
    "ends-on-merged-space": LOOP + "{% if m.role == 'assistant' %}{% generation %}{{ m.content }} {% endgeneration %}{% else %}{{ m.content }}{% endif %}next{% endfor %}",
    "ends-on-merged-newline": LOOP + "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}\n{% endgeneration %}\n\n{% else %}{{ m.content }}\n{% endif %}{% endfor %}",
    "whitespace-control": LOOP + "<{{ m.role }}>\n  {%- generation -%}\n  {{ m.content }}\n  {%- endgeneration -%}\n  </{{ m.role }}>\n{% endfor %}",
    "trim-blocks": LOOP + "<{{ m.role }}>\n{% generation %}\n{{ m.content }}\n{% endgeneration %}\n{% endfor %}",
    "plus-markers": LOOP + "<{{ m.role }}>\n{%+ generation +%}\n{{ m.content }}{%+ endgeneration %}\n{% endfor %}",
    "non-ascii": LOOP + "«{{ m.role }}» {% generation %}é{{ m.content }}😀{% endgeneration %} ✓{% endfor %}",
    "plus-markers-only": LOOP + "<{{ m.role }}>{% if m.role == 'assistant' %}{%+ generation %}{{ m.content }}<|im_end|>{%+ endgeneration %}{% else %}{{ m.content }}<|im_end|>{% endif %}\n{% endfor %}",
    "eot-after-a-space": LOOP + "{% if m.role == 'assistant' %}{% generation %}{{ m.content }} {{ '<|eot_id|>' }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}",
}


def cases():
    for name in ("qwen3-training", "llama3.1-training"):
        path = f"{name}.jinja"
        text = read(os.path.join(FIXTURES, path))
        yield {"name": f"{name}/chat", "template_file": path}, text, CHAT, None, False
        yield {"name": f"{name}/tools", "template_file": path}, text, TOOL_CHAT, TOOLS, False
        yield {"name": f"{name}/generation-prompt", "template_file": path}, text, CHAT[:4], None, True
    lfm = os.path.join(CORPUS, "templates", "LFM2.5-8B-A1B.jinja")
    if os.path.exists(lfm):
        text = read(lfm)
        yield {"name": "LFM2.5-8B-A1B/tools", "corpus_template": "LFM2.5-8B-A1B.jinja"}, text, TOOL_CHAT, TOOLS, False
    for name, text in EDGES.items():
        yield {"name": f"edge/{name}", "template": text}, text, SHORT, None, False


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def golden(case, text, messages, tools, add_generation_prompt, tokenizers):
    case.update(messages=messages, tools=tools, add_generation_prompt=add_generation_prompt, **KWARGS)
    clean = [{k: v for k, v in m.items() if v is not None} for m in messages]
    rendered, indices = render_jinja_template(
        conversations=[clean], tools=tools, documents=None, chat_template=text,
        return_assistant_tokens_mask=True, add_generation_prompt=add_generation_prompt, **KWARGS)
    case["prompt"] = rendered[0]
    case["spans"] = [list(span) for span in indices[0]]
    case["masks"] = {}
    for name, tok in tokenizers:
        try:
            out = tok.apply_chat_template(
                messages, tools=tools, chat_template=text, tokenize=True, return_dict=True,
                return_assistant_tokens_mask=True, add_generation_prompt=add_generation_prompt, **KWARGS)
            case["masks"][name] = {"ids": list(out["input_ids"]), "mask": list(out["assistant_masks"])}
        except Exception as err:  # the reference's failure is a golden too
            case["masks"][name] = {"error": f"{type(err).__name__}: {err}"}
    return case


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    dirs = args or sorted(d for d in glob.glob(os.path.join(CACHE, "*")) if os.path.isdir(d))
    tokenizers = [(os.path.basename(d), AutoTokenizer.from_pretrained(d)) for d in dirs]
    out = [golden(*args, tokenizers) for args in cases()]
    # One case per line: reviewable diffs without one line per mask entry.
    text = '{"reference": "transformers 5.23.0", "cases": [\n'
    text += ",\n".join(json.dumps(case, ensure_ascii=False) for case in out) + "\n]}\n"
    path = os.path.join(FIXTURES, "goldens.json")
    if check:
        same = read(path) == text
        print(f"{len(out)} cases x {len(tokenizers)} tokenizers: goldens {'current' if same else 'DIFFER'}")
        sys.exit(0 if same else 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    masked = sum(sum(m.get("mask", [])) for c in out for m in c["masks"].values())
    print(f"{len(out)} cases x {len(tokenizers)} tokenizers, {masked} masked tokens")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes tests/data/parse/goldens.json: transformers 5.23's `parse_response` over
realistic model outputs, for the `response_template` schemas transformers ships
(transformers/cli/serving/utils.py), those TRL ships (trl/chat_template_utils.py, read
from a downloaded wheel: --trl DIR, where DIR holds trl/chat_template_utils.py), and ours
for the bundled templates' formats (tests/data/parse/schemas/).
crates/core/tests/conformance/parse_goldens.rs runs chatplate's parser over every case and
compares.

Each case: schema id, prefix, response, tools (`true` for the shared TOOLS, a list of
its own, or `false`) and `expected`, which is the
message transformers returns or `{"error": {"class", "message"}}` for what it raises.

Usage:
  python scripts/make_parse_goldens.py --trl DIR [--check]   (--check: compare, write nothing)
Needs: transformers==5.23.0 (no torch).
"""
import argparse
import importlib.util
import json
import sys
import types
from pathlib import Path

import transformers
from transformers.cli.serving.utils import _RESPONSE_TEMPLATE_FALLBACKS
from transformers.utils.chat_parsing import parse_response

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "parse"
OUT = DATA / "goldens.json"

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
     "parameters": {"type": "object", "properties": {
         "city": {"type": "string"}, "days": {"type": "integer"},
         "units": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "set_alarm", "description": "Set an alarm",
     "parameters": {"type": "object", "properties": {
         "hour": {"type": "integer"}, "enabled": {"type": "boolean"}, "ratio": {"type": "number"},
         "tags": {"type": "array"}, "note": {"anyOf": [{"type": "null"}, {"type": "string"}]}}}}},
]


def trl_templates(trl_dir):
    """The `*_template` dicts of TRL's chat_template_utils.py, loaded without TRL's heavy
    package imports (only the module's own `from .data_utils import ...` is stubbed)."""
    path = Path(trl_dir) / "trl" / "chat_template_utils.py"
    package = types.ModuleType("trl")
    package.__path__ = [str(path.parent)]
    sys.modules["trl"] = package
    data_utils = types.ModuleType("trl.data_utils")
    data_utils.prepare_multimodal_messages = None
    sys.modules["trl.data_utils"] = data_utils
    spec = importlib.util.spec_from_file_location("trl.chat_template_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name[: -len("_template")]: value for name, value in vars(module).items()
            if name.endswith("_template") and isinstance(value, dict) and "fields" in value}


def schemas(trl_dir):
    out = {}
    for model_types, schema in _RESPONSE_TEMPLATE_FALLBACKS.items():
        out[f"transformers/{model_types[0]}"] = {"source": "transformers 5.23 cli/serving/utils.py "
                                                 f"(model types {', '.join(model_types)})", "schema": schema}
    for name, schema in sorted(trl_templates(trl_dir).items()):
        out[f"trl/{name}"] = {"source": "TRL 1.16.0 trl/chat_template_utils.py", "schema": schema}
    for path in sorted((DATA / "schemas").glob("*.json")):
        out[f"chatplate/{path.stem}"] = {"source": f"tests/data/parse/schemas/{path.name}",
                                         "schema": json.loads(path.read_text())}
    return out


Q = "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}'
ALARM = '{"name": "set_alarm", "arguments": {"hour": "7", "enabled": "true", "ratio": "1e3", "tags": "[\\"a\\"]", "note": "None"}}'

# Realistic outputs per output format: (label, prefix, response, with tools).
FAMILIES = {
    "hermes": [
        ("plain", Q, "Hello! How can I help?<|im_end|>", False),
        ("reasoning", Q, "<think>\nThe user greets me.\n</think>\n\nHello!<|im_end|>", False),
        ("prefilled-think", Q + "<think>\n", "Checking.\n</think>\n\nSunny.<|im_end|>", False),
        ("empty-think", Q + "<think>\n\n</think>\n\n", "Sunny.<|im_end|>", False),
        ("one-call", Q, f"<tool_call>\n{WEATHER}\n</tool_call><|im_end|>", True),
        ("parallel", Q, f"<tool_call>\n{WEATHER}\n</tool_call>\n<tool_call>\n{ALARM}\n</tool_call><|im_end|>", True),
        ("text-before-call", Q, f"Let me check.\n\n<tool_call>\n{WEATHER}\n</tool_call><|im_end|>", True),
        ("reasoning-and-call", Q, f"<think>\nNeed weather.\n</think>\n\n<tool_call>\n{WEATHER}\n</tool_call><|im_end|>", True),
        ("casting", Q, f"<tool_call>\n{ALARM}\n</tool_call><|im_end|>", True),
        ("no-tools-no-casting", Q, f"<tool_call>\n{ALARM}\n</tool_call><|im_end|>", False),
        ("malformed-json", Q, '<tool_call>\n{"name": "get_weather", "arguments": {"city": Paris}}\n</tool_call><|im_end|>', True),
        ("truncated", Q, '<tool_call>\n{"name": "get_weather", "arguments": {"ci', True),
        ("truncated-text", Q, "Hello, I am still wri", False),
        ("trailing-endoftext", Q, "Done.<|im_end|>\n<|endoftext|>", False),
        ("no-prefix", "", "<think>x</think>Hi<|im_end|>", False),
        ("unicode", Q, "Il fait 20 °C à Paris ☀️ 😀<|im_end|>", False),
    ],
    "qwen35": [
        ("plain", Q + "<think>\n\n</think>\n\n", "Hello!<|im_end|>", False),
        ("reasoning", Q + "<think>\n", "Let me think.\n</think>\n\nHello!<|im_end|>", False),
        ("one-call", Q, "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call><|im_end|>", True),
        ("parallel", Q, "I'll check both.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n<parameter=enabled>\nfalse\n</parameter>\n</function>\n</tool_call><|im_end|>", True),
        ("string-number", Q, "<tool_call>\n<function=get_weather>\n<parameter=city>\n75001\n</parameter>\n<parameter=days>\n3.0\n</parameter>\n</function>\n</tool_call><|im_end|>", True),
        ("truncated", Q, "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar", True),
    ],
    "gemma4": [
        ("plain", "<|turn>user\nHi<turn|>\n<|turn>model\n", "Hello!<turn|>", False),
        ("reasoning", "<|turn>user\nHi<turn|>\n<|turn>model\n", "<|channel>thought\nGreeting.<channel|>Hello!<turn|>", False),
        ("one-call", "<|turn>model\n", '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>', True),
        ("parallel", "<|turn>model\n", '<|tool_call>call:get_weather{city:<|"|>Paris, "FR"<|"|>}<tool_call|><|tool_call>call:set_alarm{hour:7,enabled:true}<tool_call|><|tool_response>', True),
        ("malformed", "<|turn>model\n", '<|tool_call>call:get_weather{city:Paris}<tool_call|>', True),
        ("after-tool-response", "<|turn>model\n<|tool_call>call:get_weather{}<tool_call|><|tool_response>response:get_weather{ok}<tool_response|>", "It is sunny.<turn|>", False),
    ],
    "llama": [
        ("plain", "<|start_header_id|>assistant<|end_header_id|>\n\n", "Hello!<|eot_id|>", False),
        ("one-call", "<|start_header_id|>assistant<|end_header_id|>\n\n", '{"name": "get_weather", "parameters": {"city": "Paris", "days": "3"}}<|eot_id|>', True),
        ("malformed", "<|start_header_id|>assistant<|end_header_id|>\n\n", '{"name": "get_weather", "parameters": {"city": "Paris",}}<|eot_id|>', True),
        ("text-only-braces", "<|start_header_id|>assistant<|end_header_id|>\n\n", "Use {curly} braces.<|eot_id|>", False),
        ("truncated", "<|start_header_id|>assistant<|end_header_id|>\n\n", '{"name": "get_weather", "parameters": {"city": "Pa', True),
    ],
    "harmony": [
        ("final", "<|start|>user<|message|>Hi<|end|><|start|>assistant", "<|channel|>analysis<|message|>User says hi.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>", False),
        ("call-model-form", "<|start|>assistant", '<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris", "days": "3"}<|call|>', True),
        ("call-template-form", "<|start|>assistant", ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>', True),
        ("truncated", "<|start|>assistant", "<|channel|>analysis<|message|>Thinking about", False),
    ],
    "deepseek": [
        ("plain", "<｜User｜>Hi<｜Assistant｜><think>\n", "Greeting.\n</think>\n\nHello!<｜end▁of▁sentence｜>", False),
        ("no-think", "<｜User｜>Hi<｜Assistant｜>", "Hello!<｜end▁of▁sentence｜>", False),
        ("one-call", "<｜User｜>Hi<｜Assistant｜>", '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris", "days": "3"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>', True),
        ("parallel", "<｜User｜>Hi<｜Assistant｜>", 'Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>set_alarm\n```json\n{"hour": "7"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>', True),
    ],
    "mistral": [
        ("plain", "[INST]Hi[/INST]", "Hello!</s>", False),
        ("one-call", "[INST]Weather?[/INST]", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": "3"}</s>', True),
        ("parallel", "[INST]Weather?[/INST]", 'Sure.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]set_alarm[ARGS]{"hour": 7}</s>', True),
        ("malformed", "[INST]Weather?[/INST]", '[TOOL_CALLS]get_weather[ARGS]{"city": }</s>', True),
    ],
    "firefunction": [
        ("plain", "<|start_header_id|>assistant<|end_header_id|>\n\n", "Hello!<|eot_id|>", False),
        ("calls", "<|start_header_id|>assistant<|end_header_id|>\n\n", ' functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "set_alarm", "arguments": {"hour": "7"}}]<|eot_id|>', True),
        ("not-a-list", "<|start_header_id|>assistant<|end_header_id|>\n\n", ' functools{"name": "x"}<|eot_id|>', True),
    ],
    "chatml-headers": [
        ("plain", "<|start_header_id|>assistant<|end_header_id|>", "Hello!<|eot_id|>", False),
        ("calls", "<|start_header_id|>assistant<|end_header_id|>", 'Checking.<|tool_start|>[\n  {\n    "type": "function",\n    "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": "2"}}\n  }\n]<|tool_end|><|eot_id|>', True),
    ],
    "glm": [
        ("plain", "<|user|>Hi<|assistant|>", "<think>Greeting.</think>\nHello!", False),
        ("one-call", "<|user|>Hi<|assistant|>", "<think></think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call><|user|>", True),
    ],
    "lfm": [
        ("plain", Q, "Hello!<|im_end|>", False),
        ("calls", Q, "<|tool_call_start|>[get_weather(city='Paris', days=3), set_alarm(hour=7, tags=[\"a\", \"b\"])]<|tool_call_end|>Done.<|im_end|>", True),
    ],
    "nemotron": [
        ("reasoning", Q + "<think>\n", "Thinking.\n</think>\nHello!<|im_end|>", False),
        ("no-reasoning", Q + "<think></think>", "Hello!<|im_end|>", False),
        ("one-call", Q + "<think></think>", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n<|im_end|>", True),
    ],
}

# Which outputs each schema is run over.
SCHEMA_FAMILIES = {
    "transformers/qwen2": ["hermes"], "transformers/qwen3_5": ["qwen35", "hermes"],
    "transformers/gemma4": ["gemma4"], "trl/qwen3": ["hermes"], "trl/qwen3_5": ["qwen35"],
    "trl/glm4moe": ["glm"], "trl/llama3": ["llama"], "trl/gptoss": ["harmony"], "trl/lfm2_2_5": ["lfm"],
    "trl/nemotron_3": ["nemotron"], "trl/gemma4": ["gemma4"], "trl/deepseek_r1_distill": ["deepseek"],
    "chatplate/qwen2.5-reasoning-tools": ["hermes"], "chatplate/gemma-3-tools": ["gemma3"],
    "chatplate/chatml-with-headers-tools": ["chatml-headers"], "chatplate/firefunction-v2": ["firefunction"],
    "chatplate/llama-3.1-json": ["llama"], "chatplate/mistral-tool-calls": ["mistral"],
    "chatplate/deepseek-r1-tools": ["deepseek"], "chatplate/gpt-oss-harmony": ["harmony"],
}

G = "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"
FAMILIES["gemma3"] = [
    ("plain", G, "Hello!<end_of_turn>", False),
    ("one-call", G, f"<tool_call>\n{WEATHER}\n</tool_call><end_of_turn>", True),
    ("text-and-calls", G, f"Checking.\n<tool_call>\n{WEATHER}\n</tool_call>\n<tool_call>\n{ALARM}\n</tool_call><end_of_turn>", True),
    ("malformed", G, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {'city': 'Paris'}}\n</tool_call><end_of_turn>", True),
]

BASE = {"start_anchor": "A:", "fields": {"content": {"close": "<end>"}}}


def variant(**changes):
    schema = json.loads(json.dumps(BASE))
    for key, value in changes.items():
        if key.startswith("field_"):
            schema["fields"]["content"][key[len("field_"):]] = value
        else:
            schema[key] = value
    return schema


# Invalid schemas and edge cases of the format itself: (label, schema, prefix, response[, tools]).
EDGE = [
    ("not-a-dict", [1], "", "x"),
    ("version-2", variant(version=2), "", "x"),
    ("version-true", variant(version=True), "", "hi<end>"),
    ("unknown-key", variant(extra=1, other=2), "", "x"),
    ("defaults-not-dict", variant(defaults=[]), "", "x"),
    ("empty-fields", {"start_anchor": "A", "fields": {}}, "", "x"),
    ("no-anchor", {"fields": {"content": {}}}, "", "x"),
    ("both-anchors", variant(start_anchor_pattern="B"), "", "x"),
    ("field-not-dict", {"start_anchor": "A", "fields": {"content": "text"}}, "", "x"),
    ("field-unknown-keys", variant(field_bogus=1, field_zz=2), "", "x"),
    ("unknown-parser", variant(field_content="yaml"), "", "x"),
    ("empty-literal", variant(field_close=""), "", "x"),
    ("empty-literal-list", variant(field_close=[]), "", "x"),
    ("literal-list-non-str", variant(field_close=["a", 1]), "", "x"),
    ("literal-int", variant(field_close=3), "", "x"),
    ("bad-regex", {"start_anchor": "A", "fields": {"content": {"close_pattern": "(unclosed"}}}, "", "x"),
    ("join-without-repeats", variant(field_join=","), "", "x"),
    ("join-not-str", variant(field_join=1, field_repeats=True), "", "x"),
    ("transform-each-no-transform", variant(field_transform_each=True), "", "x"),
    ("transform-each-not-bool", variant(field_transform_each=1), "", "x"),
    ("mixed-placeholder", variant(field_transform={"a": "x {content}"}), "", "x"),
    ("unused-captures", {"start_anchor": "A", "fields": {"t": {"open_pattern": "<(?P<n>\\w+)>"}}}, "", "x"),
    ("two-implicit", {"start_anchor": "A", "fields": {"a": {}, "b": {}}}, "", "x"),
    ("required-missing", {"start_anchor": "A", "fields": {"content": {}, "t": {"open": "<t>", "optional": False}}}, "", "hi"),
    ("required-present-empty", {"start_anchor": "A", "fields": {"content": {}, "t": {"open": "<t>", "close": "</t>", "optional": False}}}, "", "hi<t></t>"),
    ("undefined-placeholder", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "transform": {"v": "{nope}"}}}}, "", "<t>x"),
    ("dotted-into-str", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "transform": {"v": "{content.a}"}}}}, "", "<t>x"),
    ("dotted-missing-key", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "content": "json", "transform": {"v": "{content.b}"}}}}, "", '<t>{"a": 1}'),
    ("int-parser", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}}}, "", "<n> 1_000 </n>"),
    ("int-parser-bad", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}}}, "", "<n>3.5</n>"),
    ("float-parser", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "float"}}}, "", "<n>1e-7</n>"),
    ("float-parser-bad", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "float"}}}, "", "<n>abc</n>"),
    ("bool-parser", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "bool"}}}, "", "<n>TRUE</n>"),
    ("kv-lines", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "kv-lines", "content_args": {"value_parser": {"name": "int"}}}}}, "", "<n>\na: 1\nnoise\nb : 2\n</n>"),
    ("kv-lines-custom", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "kv-lines", "content_args": {"line_sep": ";", "kv_sep": "=", "strip": False}}}}, "", "<n>a=1; b = 2;c</n>"),
    ("xml-merge", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "xml-inline", "content_args": {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": True}}}}, "", "<n><a>1</a><b>2</b><a>3</a></n>"),
    ("xml-no-key", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "xml-inline", "content_args": {"tag_pattern": "<(?P<k>\\w+)>"}}}}, "", "<n><a></n>"),
    ("xml-no-pattern", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "xml-inline"}}}, "", "<n><a></n>"),
    ("json-allow-non-json", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "json", "content_args": {"allow_non_json": True}}}}, "", "<n> not json </n>"),
    ("json-numbers", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "json"}}}, "", "<n>[1, -0, 1.5, 1e3, 2E-7, 123456789012345678901234567890, 0.1]</n>"),
    ("json-escapes", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "json"}}}, "", '<n>"a\\u00e9\\ud83d\\ude00\\n\\/"</n>'),
    ("json-extra-data", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "json"}}}, "", '<n>{"a": 1} trailing</n>'),
    ("json-dialect-error", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "json", "content_args": {"unquoted_keys": True}}}}, "", "<n>{a:1,b:}</n>"),
    ("json-sentinel", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "json", "content_args": {"string_delims": [["'", "'"]]}}}}, "", "<n>\u0001</n>"),
    ("join", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "close": "</t>", "repeats": True, "join": "|"}, "content": {}}}, "", "<t>a</t>mid<t>b</t>"),
    ("join-not-string", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "close": "</t>", "repeats": True, "join": "|", "content": "int"}}}, "", "<t>1</t>"),
    ("transform-each", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "close": "</t>", "content": "json", "transform": {"n": "{name}", "k": "lit", "x": 5}, "transform_each": True}}}, "", '<t>[{"name": "a"}, {"name": "b"}]</t>'),
    ("transform-each-not-list", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "close": "</t>", "content": "json", "transform": {"n": "{name}"}, "transform_each": True}}}, "", '<t>{"name": "a"}</t>'),
    ("transform-each-not-dict", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "close": "</t>", "content": "json", "transform": {"n": "{name}"}, "transform_each": True}}}, "", '<t>[1]</t>'),
    ("defaults-kept-empty", {"defaults": {"role": "assistant", "content": ""}, "start_anchor": "A", "fields": {"content": {"close": "<e>"}}}, "", "<e>"),
    ("anchor-absent-prefix-kept", {"start_anchor": "ZZZ", "fields": {"content": {"close": "<e>"}, "r": {"open": "<r>", "close": "</r>"}}}, "<r>from prefix</r>", "answer<e>"),
    ("last-anchor-wins", {"start_anchor": ["A:", "B:"], "fields": {"content": {}}}, "A: one B: two A:", " three"),
    ("no-implicit-drops-text", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "close": "</t>"}}}, "", "lost<t>kept</t>lost"),
    ("zero-width-close-stops", {"start_anchor": "A", "fields": {"content": {"close_pattern": "(?=<x>)"}}}, "", "<x>rest is dropped"),
    ("longest-at-same-start", {"start_anchor": "A", "fields": {"a": {"open": "<a", "close": ">"}, "b": {"open": "<ab", "close": ">"}}}, "", "<abc>"),
    ("lookbehind", {"start_anchor": "A", "fields": {"content": {"close_pattern": "(?<=!)\\s*$"}}}, "", "Hi!\n"),
    ("dollar-before-newline", {"start_anchor": "A", "fields": {"content": {"close_pattern": "x$"}}}, "", "ax\n"),
    ("repeated-plain-field", {"start_anchor": "A", "fields": {"t": {"open": "<t>", "close": "</t>"}}}, "", "<t>1</t><t>2</t>"),
    ("json-error-non-ascii", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "json"}}}, "", '<n>{"été": "ü",\n "x": ?}</n>'),
    ("z-anchor", {"start_anchor": "A", "fields": {"content": {"close_pattern": "x\\Z"}}}, "", "ax\n"),
    ("literal-brace", {"start_anchor": "A", "fields": {"t": {"open_pattern": "{call}", "close": "{/call}"}, "content": {}}}, "", "hi {call}x{/call}"),
    ("anchor-pattern", {"start_anchor_pattern": "<\\|(?:model|assistant)\\|>\\n?", "fields": {"content": {}}}, "<|user|>hi<|assistant|>\n", "Hello"),
    ("repeats-into-default-list", {"defaults": {"tool_calls": []}, "start_anchor": "A", "fields": {"tool_calls": {"open": "<t>", "close": "</t>", "repeats": True}}}, "", "<t>a</t><t>b</t>"),
    ("kv-empty-separator", {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "kv-lines", "content_args": {"kv_sep": ""}}}}, "", "<n>a=1</n>"),
    ("casting-types", {"start_anchor": "A", "fields": {"c": {"open_pattern": "<c (?P<name>\\w+)>", "close": "</c>", "content": "xml-inline", "content_args": {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": True}, "repeats": True, "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}}}}, "",
     "<c f><i>1e2</i><n>2.50</n><m>7</m><b>0</b><o>None</o><u>x</u><d>4</d><d>5</d><a>[1]</a><s> 8 </s><e>3.5</e></c>",
     [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
         "i": {"type": "integer"}, "n": {"type": "number"}, "m": {"type": ["integer", "null"]},
         "b": {"type": "boolean"}, "o": {"type": "integer", "nullable": True}, "u": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
         "d": {"type": "integer"}, "a": {"type": "array"}, "s": {"type": "integer"}, "e": {"type": "integer"}}}}}]),
]


# Values of every JSON type where the format expects a string, a pattern, a list of
# pairs or a parser: transformers fails on each with Python's own exception (a list is
# unhashable, an int not iterable), which chatplate must raise too.
ODD_VALUES = [("list", ["a"]), ("dict", {"a": 1}), ("int", 3), ("null", None), ("true", True),
              ("float", 1.5), ("empty-list", []), ("empty-dict", {})]


def n_field(content, args):
    return {"start_anchor": "A", "fields": {"n": {"open": "<n>", "close": "</n>", "content": content,
                                                  "content_args": args}}}


for label, odd in ODD_VALUES:
    EDGE += [
        (f"type/open-pattern-{label}", {"start_anchor": "A", "fields": {"t": {"open_pattern": odd, "close": "x"}}}, "", "x"),
        (f"type/close-pattern-{label}", {"start_anchor": "A", "fields": {"content": {"close_pattern": odd}}}, "", "x"),
        (f"type/start-pattern-{label}", {"start_anchor_pattern": odd, "fields": {"content": {}}}, "", "x"),
        (f"type/content-{label}", variant(field_content=odd), "", "hi<end>"),
        (f"type/version-{label}", variant(version=odd), "", "hi<end>"),
        (f"type/tag-pattern-{label}", n_field("xml-inline", {"tag_pattern": odd}), "", "<n>a</n>"),
        (f"type/string-delims-{label}", n_field("json", {"string_delims": odd}), "", "<n>'x'</n>"),
        (f"type/value-parser-{label}", n_field("kv-lines", {"value_parser": odd}), "", "<n>a: 1</n>"),
        (f"type/value-parser-name-{label}", n_field("kv-lines", {"value_parser": {"name": odd}}), "", "<n>a: 1</n>"),
    ]
for label, delims in [("short-pair", [["'", "'"], ["a"]]), ("long-pair", [["'", "'", "x"]]),
                      ("two-char-string", ["''"]), ("int-pair", [5]), ("int-delim", [[5, "'"]]),
                      ("dict-pair", [{"a": 1, "b": 2}]), ("string", "ab"), ("dict", {"''": 1})]:
    EDGE.append((f"type/string-delims-pairs-{label}", n_field("json", {"string_delims": delims}), "", "<n>'x'</n>"))
EDGE += [
    # Patterns that backtrack a lot, on outputs small enough that Python and chatplate
    # both finish: the same message (chatplate bounds them by time on long outputs).
    ("hostile/variable-look-behind", {"start_anchor": "A", "fields": {"content": {"close_pattern": "(?<=a+)b"}}}, "", "a" * 2000 + "b tail"),
    ("hostile/variable-look-behind-absent", {"start_anchor": "A", "fields": {"content": {"close_pattern": "(?<=a+)b"}}}, "", "a" * 2000),
    ("hostile/repeated-look-behind", {"start_anchor": "A", "fields": {"content": {"close_pattern": "(?:(?<=a+)a)*b"}}}, "", "xaab" + "a" * 300),
    ("hostile/look-ahead-to-absent-close", {"start_anchor": "A", "fields": {"r": {"open_pattern": "(?=[\\s\\S]*?</think>)", "close": "</think>"}, "content": {}}}, "", "x" * 3000),
    ("hostile/nested-quantifiers", {"start_anchor": "A", "fields": {"content": {"close_pattern": "(?:(?=a)a|a)*c"}}}, "", "a" * 18 + "c!"),
    ("hostile/backreference", {"start_anchor": "A", "fields": {"content": {"close_pattern": "(\\w+)\\1\\1!"}}}, "", "ab" * 300 + "abab!"),
    ("hostile/dollar-in-alternation", {"start_anchor": "A", "fields": {"content": {"close_pattern": "<end>\\s*|$"}}}, "", "x" * 5000 + "\n"),
]


def run(schema, prefix, response, tools):
    try:
        return parse_response(response, schema, prefix=prefix, tools=tools)
    except Exception as error:  # the class and message are the golden
        return {"error": {"class": type(error).__name__, "message": str(error)}}


def build(trl_dir):
    all_schemas = schemas(trl_dir)
    cases = []
    for schema_id, families in SCHEMA_FAMILIES.items():
        schema = all_schemas[schema_id]["schema"]
        for family in families:
            for label, prefix, response, with_tools in FAMILIES[family]:
                tools = TOOLS if with_tools else None
                cases.append({"id": f"{schema_id}:{family}:{label}", "schema": schema_id, "prefix": prefix,
                              "response": response, "tools": with_tools,
                              "expected": run(schema, prefix, response, tools)})
    for label, schema, prefix, response, *tools in EDGE:
        schema_id = f"edge/{label}"
        tools = tools[0] if tools else None
        all_schemas[schema_id] = {"source": "scripts/make_parse_goldens.py", "schema": schema}
        cases.append({"id": schema_id, "schema": schema_id, "prefix": prefix, "response": response,
                      "tools": tools or False, "expected": run(schema, prefix, response, tools)})
    return {"generated_by": f"scripts/make_parse_goldens.py with transformers {transformers.__version__}",
            "tools": TOOLS, "schemas": all_schemas, "cases": cases}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trl", required=True, help="folder holding trl/chat_template_utils.py (TRL 1.16.0)")
    parser.add_argument("--check", action="store_true", help="compare with the committed goldens")
    args = parser.parse_args()
    if transformers.__version__ != "5.23.0":
        sys.exit(f"transformers 5.23.0 is the reference; this is {transformers.__version__}")
    goldens = build(args.trl)
    text = json.dumps(goldens, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        if OUT.read_text() != text:
            sys.exit(f"{OUT} differs from what transformers gives now: run scripts/make_parse_goldens.py")
        print(f"{OUT}: {len(goldens['cases'])} cases match transformers")
        return
    OUT.write_text(text)
    print(f"wrote {OUT} ({len(text)} bytes)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes tests/fixtures/bench/llama-3.1-1000.json: a 1,000-message conversation on the
corpus' Llama 3.1 template, with `expected` rendered by transformers itself, and prints
transformers' median render time for the same input (the speed baseline we quote).

Needs: pip install transformers==5.23.0 jinja2==3.1.6, and ../shared/conformance.
"""
import json
import statistics
import time
from datetime import datetime
from pathlib import Path

import transformers.utils.chat_template_utils as ctu

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "bench" / "llama-3.1-1000.json"
TEMPLATE_REL = "../../../../shared/conformance/dev/templates/meta-llama-Llama-3.1-8B-Instruct.jinja"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


class FixedClock(datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 1, 15, 0, 0, 0)


def conversation():
    messages = [{"role": "system", "content": "You are a helpful assistant."}]
    turn = 0
    while len(messages) < 1000:
        turn += 1
        messages.append({"role": "user", "content": f"Question {turn}: what is the weather like in city number {turn}?"})
        if turn % 10 == 0 and len(messages) <= 997:
            messages.append({"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": f"City {turn}"}}}]})
            messages.append({"role": "tool", "content": json.dumps({"city": f"City {turn}", "temperature_c": 20 + turn % 7})})
        messages.append({"role": "assistant", "content": f"Answer {turn}: it is sunny, about {20 + turn % 7} degrees."})
    return messages[:1000]


def main():
    ctu.datetime = FixedClock
    template = (OUT.parent / TEMPLATE_REL).resolve().read_text()
    messages = conversation()
    kwargs = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
    render = lambda: ctu.render_jinja_template(conversations=[messages], tools=TOOLS, chat_template=template,
                                               add_generation_prompt=True, **kwargs)[0][0]
    expected = render()
    samples = []
    for _ in range(50):
        start = time.perf_counter()
        render()
        samples.append(time.perf_counter() - start)
    fixture = {"version": 1, "template": {"path": TEMPLATE_REL}, "bos_token": kwargs["bos_token"],
               "eos_token": kwargs["eos_token"], "add_generation_prompt": True, "messages": messages,
               "tools": TOOLS, "clock": "2026-01-15T00:00:00", "expected": {"prompt": expected}}
    OUT.write_text(json.dumps(fixture, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(messages)} messages, {len(expected)} chars")
    print(f"transformers render median: {statistics.median(samples) * 1000:.2f} ms (50 runs)")


if __name__ == "__main__":
    main()

"""The generated long conversation shared by scripts/make_long_goldens.py and
scripts/bench_vs_transformers.py: its tool, its fixed clock and the messages."""
import json
from datetime import datetime

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CLOCK = "2026-01-15T00:00:00"


class FixedClock(datetime):
    """`strftime_now` at CLOCK, as the fixtures' `clock` gives chatplate."""

    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 1, 15, 0, 0, 0)


def conversation(count, call_content=None):
    """A system prompt, then questions and answers; every tenth turn calls a tool.

    `call_content`: the tool-calling assistant message's `content` (None: no key)."""
    messages = [{"role": "system", "content": "You are a helpful assistant."}]
    turn = 0
    while len(messages) < count:
        turn += 1
        messages.append({"role": "user", "content": f"Question {turn}: what is the weather like in city number {turn}?"})
        if turn % 10 == 0 and len(messages) <= count - 3:
            call = {"role": "assistant"}
            if call_content is not None:
                call["content"] = call_content
            call["tool_calls"] = [{"type": "function", "function": {
                "name": "get_weather", "arguments": {"city": f"City {turn}"}}}]
            messages.append(call)
            messages.append({"role": "tool", "content": json.dumps({"city": f"City {turn}", "temperature_c": 20 + turn % 7})})
        messages.append({"role": "assistant", "content": f"Answer {turn}: it is sunny, about {20 + turn % 7} degrees."})
    return messages[:count]

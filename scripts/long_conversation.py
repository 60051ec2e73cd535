"""The generated long conversation shared by scripts/make_long_goldens.py,
scripts/bench_vs_transformers.py, scripts/bench_speed.py, scripts/count_render.py and
scripts/make_app_sessions.py: its tool, its fixed clock, the messages, and a corpus
template's own variables for it."""
import json
from datetime import datetime

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CLOCK = "2026-01-15T00:00:00"


def template_variables(meta):
    """A dev-corpus template's variables besides the conversation, from its metadata
    (`ROOT.json` beside `ROOT.jinja`): its `extra`, and the tools once more under its
    `tools_json_kwarg` as JSON (firefunction-v2 reads them as `functions`)."""
    variables = dict(meta.get("extra") or {})
    if meta.get("tools_json_kwarg"):
        functions = [tool["function"] for tool in TOOLS]
        variables[meta["tools_json_kwarg"]] = json.dumps(functions, indent=4, ensure_ascii=False)
    return variables


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

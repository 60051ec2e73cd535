#!/usr/bin/env python3
"""Writes a large session fixture for measuring chatplate's memory on big inputs
(BENCHMARKS.md, "Memory on large fixtures"):

    python3 scripts/make_big_fixture.py conversation 100 /tmp/big.json
    /usr/bin/time -v target/release/chatplate check /tmp/big.json

SHAPE is one of:
  conversation  a long chat: user questions, assistant answers of a few kilobytes,
                reasoning, and a tool call with its result every tenth turn;
  text          ten messages of about a tenth of the size each;
  small         many short messages (about 80 bytes of text each);
  dense         tool calls with small JSON arguments and no text (the most values
                per byte a fixture can have: reading it is refused by the load bound).

MB is the approximate size in megabytes. The fixture renders with the bundled
chatml-with-headers-tools template and expects an empty prompt (check reports a
failure, after loading and rendering everything; the prompt of a fixture over 32 MB
is over the default output limit, raise it with --max-output to render all of it). Needs only Python 3.
"""
import json
import sys


def sentence(i):
    return f"Sentence {i} of the answer explains one more detail of the question at hand. "


def conversation(target):
    messages, size, turn = [], 0, 0
    while size < target:
        turn += 1
        question = f"Question {turn}: " + "please explain the next part in more depth. " * 8
        messages.append({"role": "user", "content": question})
        if turn % 10 == 0:
            call = {"type": "function", "function": {"name": "search", "arguments": {"query": f"topic {turn}", "limit": 5}}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            result = json.dumps({"results": [f"result {turn}.{k}: " + "text " * 40 for k in range(5)]})
            messages.append({"role": "tool", "name": "search", "content": result})
            size += len(result)
        answer = "".join(sentence(turn * 100 + k) for k in range(40))
        messages.append({"role": "assistant", "content": answer, "reasoning_content": "Thinking it through. " * 20})
        size += len(question) + len(answer) + 600
    return messages


def text(target):
    per = target // 10
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": "word " * (per // 5)} for i in range(10)]


def small(target):
    messages, size, i = [], 0, 0
    while size < target:
        content = f"Message {i}: the quick brown fox jumps over the lazy dog, again and again."
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": content})
        size += len(content) + 40
        i += 1
    return messages


def dense(target):
    messages, size, i = [], 0, 0
    while size < target:
        messages.append({"role": "user", "content": f"q{i}"})
        arguments = {"a": i, "b": [1, 2, 3, 4.5, True, None], "c": "x"}
        call = {"type": "function", "function": {"name": "f", "arguments": arguments}}
        messages.append({"role": "assistant", "tool_calls": [call]})
        size += 170
        i += 1
    return messages


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("conversation", "text", "small", "dense"):
        sys.exit(__doc__)
    shape, megabytes, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    messages = globals()[shape](megabytes * 1_000_000)
    fixture = {
        "version": 1,
        "template": {"bundled": "chatml-with-headers-tools"},
        "add_generation_prompt": True,
        "messages": messages,
        "expected": {"prompt": ""},
    }
    with open(out, "w", encoding="utf-8") as file:
        json.dump(fixture, file)
    print(f"wrote {out}: {len(messages)} messages")


if __name__ == "__main__":
    main()

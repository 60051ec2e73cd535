#!/usr/bin/env python3
"""Write the GGUF files the tests read (tests/fixtures/gguf/), with the official `gguf`
package (llama.cpp's own writer, `pip install gguf`).

Good files: `chat.gguf` (one template; bos/eos ids after the token list; a scalar of every
type and a few arrays to skip; one small tensor), `named.gguf` (default + named templates,
ids before the token list), `big-endian.gguf`, `no-template.gguf`, `bad-token-id.gguf` (an
eos id past the vocabulary). Broken files are `chat.gguf` with bytes changed: truncated in
the template, wrong magic, version 1 and 4, an absurd metadata count, an absurd string
length, an unknown value type.

Usage: python3 scripts/make_gguf_fixtures.py [OUT_DIR]
Prints one line per file written.
"""

import os
import struct
import sys

import numpy as np
import gguf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENS = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "hello", "world"]
TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def named_template(name):
    return "(" + name + ")" + TEMPLATE


def vocabulary(writer):
    writer.add_tokenizer_model("llama")
    writer.add_token_list(TOKENS)
    writer.add_token_scores([0.0] * len(TOKENS))
    writer.add_token_types([1] * len(TOKENS))


def scalars(writer):
    """One key of each scalar type and an array of arrays, for the reader to skip."""
    writer.add_uint8("test.u8", 7)
    writer.add_int8("test.i8", -7)
    writer.add_uint16("test.u16", 7)
    writer.add_int16("test.i16", -7)
    writer.add_uint32("test.u32", 7)
    writer.add_int32("test.i32", -7)
    writer.add_float32("test.f32", 0.5)
    writer.add_bool("test.bool", True)
    writer.add_uint64("test.u64", 7)
    writer.add_int64("test.i64", -7)
    writer.add_float64("test.f64", 0.25)
    writer.add_array("test.nested", [[1, 2], [3]])


def write(path, build, endianess=gguf.GGUFEndian.LITTLE):
    writer = gguf.GGUFWriter(path, "llama", endianess=endianess)
    writer.add_name("tiny-chat")
    build(writer)
    writer.add_tensor("token_embd.weight", np.arange(8, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def chat(writer):
    scalars(writer)
    vocabulary(writer)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(4)
    writer.add_add_bos_token(True)
    writer.add_chat_template(TEMPLATE)


def named(writer):
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    vocabulary(writer)
    writer.add_add_bos_token(False)
    writer.add_chat_template([
        {"name": "default", "template": named_template("default")},
        {"name": "tool_use", "template": named_template("tool_use")},
        {"name": "rag", "template": named_template("rag")},
    ])


def no_template(writer):
    vocabulary(writer)
    writer.add_bos_token_id(1)


def bad_token_id(writer):
    vocabulary(writer)
    writer.add_eos_token_id(99)
    writer.add_chat_template(TEMPLATE)


def patched(source, path, change):
    with open(source, "rb") as f:
        data = bytearray(f.read())
    data = change(data)
    with open(path, "wb") as f:
        f.write(data)
    print(f"wrote {path} ({len(data)} bytes)")


def value_at(data, key):
    """Offset of the value type that follows `key` in the metadata."""
    return data.index(key.encode()) + len(key)


def main(argv):
    out = argv[0] if argv else os.path.join(ROOT, "tests", "fixtures", "gguf")
    os.makedirs(out, exist_ok=True)
    at = lambda name: os.path.join(out, name)
    write(at("chat.gguf"), chat)
    write(at("named.gguf"), named)
    write(at("big-endian.gguf"), chat, gguf.GGUFEndian.BIG)
    write(at("no-template.gguf"), no_template)
    write(at("bad-token-id.gguf"), bad_token_id)
    good = at("chat.gguf")
    template_type = lambda d: value_at(d, "tokenizer.chat_template")
    patched(good, at("truncated.gguf"), lambda d: d[: template_type(d) + 4 + 8 + 20])
    patched(good, at("bad-magic.gguf"), lambda d: b"GGML" + d[4:])
    patched(good, at("version1.gguf"), lambda d: d[:4] + struct.pack("<I", 1) + d[8:])
    patched(good, at("version4.gguf"), lambda d: d[:4] + struct.pack("<I", 4) + d[8:])
    patched(good, at("absurd-count.gguf"), lambda d: d[:16] + struct.pack("<Q", 1 << 60) + d[24:])

    def absurd_length(d):
        length = template_type(d) + 4
        return d[:length] + struct.pack("<Q", 1 << 62) + d[length + 8:]

    def bad_type(d):
        kind = value_at(d, "general.name")
        return d[:kind] + struct.pack("<I", 99) + d[kind + 4:]

    patched(good, at("absurd-length.gguf"), absurd_length)
    patched(good, at("bad-type.gguf"), bad_type)


if __name__ == "__main__":
    main(sys.argv[1:])

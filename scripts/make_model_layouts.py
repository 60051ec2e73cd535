#!/usr/bin/env python3
"""Write the Hugging Face model-folder layouts used by the tests (tests/fixtures/models/).

Each folder is a layout transformers 5.23 reads its chat template(s) from: a
`tokenizer_config.json` string or named list, `chat_template.jinja` (the 2025 layout),
`additional_chat_templates/`, `chat_template.json` (processors), `special_tokens_map.json`
(legacy special tokens) and model-specific special tokens. Every folder also gets a tiny
`tokenizer.json` so `AutoTokenizer.from_pretrained(folder)` loads it.

The templates print every special token they see, so a token read from the wrong file shows
in the prompt. Usage: python3 scripts/make_model_layouts.py [OUT_DIR]
"""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TOKENS = "[bos={{ bos_token }} eos={{ eos_token }} unk={{ unk_token }} pad={{ pad_token }} image={{ image_token }} video={{ video_token }} audio={{ audio_token }}]\n"
TURNS = (
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{{ eos_token }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def template(label):
    """A template that names itself, prints the tokens and the tools, then the turns."""
    tools = "{% if tools %}tools: {{ tools | map(attribute='function.name') | join(', ') }}\n{% endif %}"
    return f"({label})\n{TOKENS}{tools}{TURNS}"


def added(content):
    return {"__type": "AddedToken", "content": content, "lstrip": False, "normalized": False,
            "rstrip": False, "single_word": False, "special": True}


LAYOUTS = {
    # tokenizer_config.json with a string chat_template; AddedToken objects for tokens.
    "config-string": {
        "tokenizer_config.json": {"chat_template": template("config string"), "bos_token": "<s>",
                                  "eos_token": added("</s>"), "pad_token": "<pad>",
                                  "unk_token": None},
    },
    # tokenizer_config.json with a named list: default, tool_use, rag.
    "config-named": {
        "tokenizer_config.json": {
            "chat_template": [
                {"name": "default", "template": template("config default")},
                {"name": "tool_use", "template": template("config tool_use")},
                {"name": "rag", "template": template("config rag")},
            ],
            "bos_token": added("<|begin|>"), "eos_token": "<|end|>",
        },
    },
    # The layout of models saved since 2025: no chat_template in the config at all.
    "jinja-file": {
        "tokenizer_config.json": {"bos_token": "<s>", "eos_token": "</s>", "added_tokens_decoder": {}},
        "chat_template.jinja": template("chat_template.jinja"),
    },
    # Both: the .jinja file wins over the config's chat_template.
    "jinja-over-config": {
        "tokenizer_config.json": {"chat_template": template("config, should be shadowed"),
                                  "bos_token": "<s>", "eos_token": "</s>"},
        "chat_template.jinja": template("chat_template.jinja wins"),
    },
    # chat_template.jinja is "default"; each additional file is named by its stem.
    "additional": {
        "tokenizer_config.json": {"bos_token": "<s>", "eos_token": "</s>"},
        "chat_template.jinja": template("default file"),
        "additional_chat_templates/tool_use.jinja": template("tool_use file"),
        "additional_chat_templates/rag.jinja": template("rag file"),
    },
    # Named files without chat_template.jinja replace the config's template entirely: no
    # default, so a conversation without tools has no template.
    "additional-no-default": {
        "tokenizer_config.json": {"chat_template": template("config, replaced"),
                                  "bos_token": "<s>", "eos_token": "</s>"},
        "additional_chat_templates/tool_use.jinja": template("tool_use only"),
    },
    # A processor checkpoint: the template only in chat_template.json.
    "processor-json": {
        "tokenizer_config.json": {"bos_token": "<s>", "eos_token": "</s>", "image_token": "<image>"},
        "chat_template.json": {"chat_template": template("chat_template.json")},
    },
    # Legacy special tokens: special_tokens_map.json overrides the config when the config
    # has no added_tokens_decoder (objects become AddedTokens, model-specific keys count).
    "special-tokens-map": {
        "tokenizer_config.json": {"chat_template": template("legacy map"), "bos_token": "<s>",
                                  "eos_token": "</s>"},
        "special_tokens_map.json": {"eos_token": {"content": "<|eot|>", "lstrip": False},
                                    "unk_token": "<unk>", "image_token": {"content": "<img>"}},
    },
    # With added_tokens_decoder in the config, special_tokens_map.json is not read.
    "added-tokens-decoder": {
        "tokenizer_config.json": {"chat_template": template("map ignored"), "bos_token": "<s>",
                                  "eos_token": "</s>", "added_tokens_decoder": {}},
        "special_tokens_map.json": {"eos_token": "<|ignored|>", "pad_token": "<|ignored|>"},
    },
    # Model-specific tokens: any *_token string, AddedToken objects, extra_special_tokens.
    "model-specific": {
        "tokenizer_config.json": {"chat_template": template("model-specific"), "bos_token": "<s>",
                                  "eos_token": "</s>", "image_token": "<|image|>",
                                  "video_token": added("<|video|>"),
                                  "extra_special_tokens": {"audio_token": "<|audio|>"},
                                  "add_bos_token": True},
    },
}


def write_tokenizer(path):
    """A four-word WordLevel tokenizer: enough for AutoTokenizer to load the folder."""
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": None, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "hello": 3},
                  "unk_token": "<unk>"},
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, indent=1)
        f.write("\n")


def main(argv):
    out = argv[0] if argv else os.path.join(ROOT, "tests", "fixtures", "models")
    for name, files in LAYOUTS.items():
        folder = os.path.join(out, name)
        for rel, content in files.items():
            path = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                if isinstance(content, str):
                    f.write(content)
                else:
                    json.dump(content, f, indent=2, ensure_ascii=False)
                    f.write("\n")
        write_tokenizer(os.path.join(folder, "tokenizer.json"))
    print(f"wrote {len(LAYOUTS)} layouts to {out}")


if __name__ == "__main__":
    main(sys.argv[1:])

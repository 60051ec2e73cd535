# An encoder in the style of DeepSeek's `encoding_dsv32.py` (`encode_messages`): the
# reference of a model that ships a Python encoder instead of a chat template. Written for
# chatplate's tests of `--engine py:FILE.py:FUNCTION`; it imports a sibling module, as
# vendors' encoders do.
from encoding_tokens import ASSISTANT, BOS, EOS, THINK_END, THINK_START, USER

__version__ = "0.1-test"


def encode_messages(messages, thinking_mode="chat", drop_thinking=True, add_default_bos_token=True):
    if thinking_mode not in ("chat", "thinking"):
        raise ValueError(f"Invalid thinking_mode: {thinking_mode}")
    prompt = BOS if add_default_bos_token else ""
    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "system":
            prompt += content
        elif role == "user":
            prompt += USER + content
        elif role == "assistant":
            prompt += ASSISTANT + THINK_END + content + EOS
        else:
            raise NotImplementedError(f"Unknown role: {role}")
    if messages and messages[-1]["role"] == "user":
        prompt += ASSISTANT + (THINK_START if thinking_mode == "thinking" else THINK_END)
    return prompt

# chatplate compare's `mistral-common` engine: Mistral's own reference encoder. Reads one
# JSON request on stdin (the plug-in protocol, with "tokenizer": a name of the tokenizers
# mistral-common ships, or a tokenizer file), encodes the conversation as an OpenAI chat
# request with `encode_chat_completion`, and tokenizes the request's "reference" prompt
# (chatplate's render of the session's template) with the same tokenizer, so the two are
# compared token by token. With `--lines`, one request a line (a corpus report).
#
# The reference is tokenized as a server tokenizes a rendered prompt: the tokenizer's
# special tokens written in the text (`<s>`, `[INST]`) are those tokens, the text between
# them is encoded plainly, and a SentencePiece tokenizer adds its leading `▁` only at the
# start of the prompt (as Hugging Face's Metaspace pre-tokenizer with `prepend_scheme`
# "first" does), not after every special token.
import json
import re
import sys

SHIPPED = {
    "v1": lambda M: M.v1(),
    "v2": lambda M: M.v2(),
    "v3": lambda M: M.v3(),
    "v3-tekken": lambda M: M.v3(is_tekken=True),
    "v7": lambda M: M.v7(),
}
LOADED = {}


def tokenizer(name):
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    if name not in LOADED:
        make = SHIPPED.get(name)
        LOADED[name] = make(MistralTokenizer) if make else MistralTokenizer.from_file(name)
    return LOADED[name]


def token_text(inner, token):
    # The text a token stands for: a special token's own string, else its bytes.
    if inner.is_special(token):
        return inner.id_to_piece(token)
    if hasattr(inner, "id_to_byte_piece"):
        return inner.id_to_byte_piece(token).decode("utf-8", "replace")
    piece = inner.id_to_piece(token)
    byte = re.fullmatch(r"<0x([0-9A-Fa-f]{2})>", piece)
    return chr(int(byte.group(1), 16)) if byte else piece.replace("\u2581", " ")


def encode_text(inner, text, first):
    if not text:
        return []
    model = getattr(inner, "_model", None)
    if first or not hasattr(model, "serialized_model_proto"):
        return inner.encode(text, bos=False, eos=False)
    # SentencePiece adds `▁` before every text it encodes: encode after a `\n` piece and
    # drop that piece's tokens instead, as a tokenizer reading one whole prompt would.
    marker = inner.encode("\n", bos=False, eos=False)
    ids = inner.encode("\n" + text, bos=False, eos=False)
    return ids[len(marker):] if ids[: len(marker)] == marker else ids


def tokenize(inner, text):
    specials = sorted(
        {inner.id_to_piece(t): t for t in inner.special_ids}.items(), key=lambda kv: -len(kv[0])
    )
    ids = {piece: token for piece, token in specials if piece}
    pattern = "|".join(re.escape(piece) for piece in ids)
    tokens, at = [], 0
    for found in re.finditer(pattern, text) if pattern else []:
        tokens += encode_text(inner, text[at : found.start()], at == 0)
        tokens.append(ids[found.group(0)])
        at = found.end()
    return tokens + encode_text(inner, text[at:], at == 0)


def openai_messages(messages):
    # mistral-common takes tool-call arguments as the JSON text OpenAI sends.
    out = []
    for message in messages:
        message = dict(message)
        calls = message.get("tool_calls")
        if calls:
            message["tool_calls"] = [dict(call) for call in calls]
            for call in message["tool_calls"]:
                function = dict(call.get("function") or {})
                if not isinstance(function.get("arguments"), str):
                    function["arguments"] = json.dumps(function.get("arguments"))
                call["function"] = function
        out.append(message)
    return out


def answer(data):
    try:
        import mistral_common
        from mistral_common.protocol.instruct.request import ChatCompletionRequest
    except Exception as err:  # noqa: BLE001 - any import failure means "not installed"
        return {"missing": f"{type(err).__name__}: {err}"}
    out = {"version": f"mistral-common {mistral_common.__version__} ({data['tokenizer']})"}
    try:
        mistral = tokenizer(data["tokenizer"])
    except Exception as err:  # noqa: BLE001 - a tokenizer that does not load: not runnable
        return {"missing": f"tokenizer {data['tokenizer']}: {type(err).__name__}: {err}"}
    inner = mistral.instruct_tokenizer.tokenizer
    try:
        request = ChatCompletionRequest.from_openai(
            openai_messages(data["messages"]),
            tools=data.get("tools") or None,
            continue_final_message=bool(data.get("continue_final_message")),
        )
        tokens = mistral.encode_chat_completion(request).tokens
    except Exception as err:  # noqa: BLE001 - refusing the conversation is the answer
        out["error"] = {"type": type(err).__name__, "message": str(err)}
        return out
    out["tokens"] = tokens
    out["token_strings"] = [token_text(inner, t) for t in tokens]
    if data.get("reference") is not None:
        reference = tokenize(inner, data["reference"])
        out["reference_tokens"] = reference
        out["reference_token_strings"] = [token_text(inner, t) for t in reference]
    return out


def main():
    if "--lines" in sys.argv:
        for line in sys.stdin.buffer:
            sys.stdout.write(json.dumps(answer(json.loads(line.decode("utf-8")))) + "\n")
            sys.stdout.flush()
        return
    sys.stdout.write(json.dumps(answer(json.loads(sys.stdin.buffer.read().decode("utf-8")))))


main()

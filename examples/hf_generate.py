"""A Hugging Face transformers causal language model generating text on `webgpu`, with the CPU fallback
off (every op runs a webgpu kernel, or the script fails), against the same greedy generation on the
CPU: tokens/s on each device and whether the tokens agree.

    python examples/hf_generate.py [--new-tokens N] [--arch llama|gpt2|qwen3]
    python examples/hf_generate.py --model PATH [--prompt TEXT]

Without --model, the model is built from a small config with random (seeded) weights, so nothing is
downloaded and the output is gibberish token ids; --model loads a local checkpoint directory (and
its tokenizer, when there is one) with `from_pretrained(PATH)`, again without network access.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download: a local path or a config, nothing else

import torch
import transformers

import torch_webgpu  # noqa: F401  (registers `webgpu`; `import torch` alone does too once it is installed)
from torch_webgpu.fallback import fallback_enabled


def tiny_model(arch: str, seed: int = 0):
    """A small randomly initialised causal LM from its config class (no eos token: it never stops early)."""
    torch.manual_seed(seed)
    common = dict(vocab_size=1000, bos_token_id=1, eos_token_id=None, pad_token_id=0)
    if arch == "gpt2":
        cfg = transformers.GPT2Config(n_layer=2, n_embd=128, n_head=4, n_positions=256, **common)
        return transformers.GPT2LMHeadModel(cfg)
    dec = dict(
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        **common,
    )
    if arch == "qwen3":
        return transformers.Qwen3ForCausalLM(transformers.Qwen3Config(head_dim=32, **dec))
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**dec))


def generate(model, ids, mask, new_tokens):
    """Greedy generation; returns (output ids on the CPU, seconds). `.cpu()` waits for the device."""
    t0 = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            ids,
            attention_mask=mask,
            max_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=model.generation_config.pad_token_id or 0,
        ).cpu()
    return out, time.perf_counter() - t0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Greedy generation with a transformers causal LM on webgpu.")
    p.add_argument("--model", help="a local checkpoint directory (default: a small random model)")
    p.add_argument(
        "--arch",
        default="llama",
        choices=["llama", "gpt2", "qwen3"],
        help="architecture of the random model (without --model)",
    )
    p.add_argument("--prompt", default="The capital of France is", help="prompt text (with --model's tokenizer)")
    p.add_argument("--new-tokens", type=int, default=32)
    args = p.parse_args(argv)

    tokenizer = None
    if args.model:
        model = transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(args.model)
            if not tokenizer(args.prompt)["input_ids"]:  # without tokenizer files, an empty tokenizer loads
                tokenizer = None
        except (OSError, ValueError):
            pass
        if tokenizer is None:
            print("no tokenizer in the checkpoint: the prompt is random token ids")
        what = f"{type(model).__name__} from {args.model}"
    else:
        model = tiny_model(args.arch)
        c = model.config
        what = (
            f"{type(model).__name__} with random weights from a small config ({c.num_hidden_layers} layers, "
            f"hidden size {c.hidden_size}, vocabulary {c.vocab_size})"
        )
    model.eval()
    params = sum(t.numel() for t in model.parameters())
    print(f"model: {what}, {params / 1e6:.2f} M parameters")
    if tokenizer is not None:
        enc = tokenizer(args.prompt, return_tensors="pt")
        ids, mask = enc["input_ids"], enc["attention_mask"]
    else:
        ids = torch.randint(3, model.config.vocab_size, (1, 16), generator=torch.Generator().manual_seed(1))
        mask = torch.ones_like(ids)

    info = torch_webgpu.info()
    print(f"webgpu adapter: {info['adapter']} ({info['backend']}, {info['adapter_type']})")
    if info["adapter_type"] == "cpu":
        print(
            "note: this adapter is a CPU emulation of a GPU (as in CI): results are real, speed is not the point here"
        )

    generate(model, ids, mask, 2)  # warm-up on each device, so neither timing holds first-call costs
    cpu_out, cpu_sec = generate(model, ids, mask, args.new_tokens)
    gpu_model = model.to("webgpu")  # moves the parameters: the CPU run is done
    with fallback_enabled(False):  # an op without a webgpu kernel raises instead of running on the CPU
        generate(gpu_model, ids.to("webgpu"), mask.to("webgpu"), 2)  # warm-up: compiles the kernels
        out, sec = generate(gpu_model, ids.to("webgpu"), mask.to("webgpu"), args.new_tokens)
    n = out.shape[1] - ids.shape[1]
    n_cpu = cpu_out.shape[1] - ids.shape[1]
    print(
        f"webgpu: {n} new tokens in {sec:.2f} s, {n / sec:.1f} tokens/s (after a warm-up run that compiled the kernels)"
    )
    print(f"cpu:    {n_cpu} new tokens in {cpu_sec:.2f} s, {n_cpu / cpu_sec:.1f} tokens/s (after a warm-up run)")
    same = 0
    while same < min(n, n_cpu) and out[0, ids.shape[1] + same] == cpu_out[0, ids.shape[1] + same]:
        same += 1
    if same == n == n_cpu:
        print(f"tokens: the same as the CPU's ({n} of {n})")
    else:
        print(
            f"tokens: the first {same} of {max(n, n_cpu)} are the CPU's (greedy decoding can flip on a near "
            "tie of two logits)"
        )
    print("CPU fallback: off (every op of the generation ran a webgpu kernel)")
    if tokenizer is not None:
        print("text:", tokenizer.decode(out[0], skip_special_tokens=True))
    else:
        print("new token ids:", out[0, ids.shape[1] :].tolist())
    return 0


if __name__ == "__main__":
    sys.exit(main())

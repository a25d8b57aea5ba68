"""Hugging Face transformers' greedy ``generate()`` with the CPU fallback off (issue 14): GPT-2, Llama,
Qwen3, Mistral and T5, each a tiny randomly initialised model built from its config class with a
fixed seed (no hub access), produce exactly the CPU's token ids, and a forward pass's logits are
within 1e-4 of the CPU's. Llama also runs without the KV cache and on a left-padded batch of two
with an attention mask (T5, an encoder-decoder, on a right-padded one). Written against
transformers 5.23.0 (what pip picks for torch 2.13)."""

import copy
import warnings

import pytest
import torch

import torch_webgpu  # noqa: F401
from torch_webgpu.fallback import fallback_enabled

T = pytest.importorskip("transformers")

W = "webgpu"
VOCAB = 1000
ARCHS = ["gpt2", "llama", "qwen3", "mistral", "mixtral", "t5"]


def build(name):
    torch.manual_seed(0)
    dec = dict(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    if name == "gpt2":
        m = T.GPT2LMHeadModel(
            T.GPT2Config(
                n_layer=2,
                n_embd=64,
                n_head=4,
                vocab_size=VOCAB,
                n_positions=64,
                bos_token_id=1,
                eos_token_id=2,
                pad_token_id=0,
            )
        )
    elif name == "llama":
        m = T.LlamaForCausalLM(T.LlamaConfig(**dec))
    elif name == "qwen3":
        m = T.Qwen3ForCausalLM(T.Qwen3Config(head_dim=16, **dec))
    elif name == "mistral":
        m = T.MistralForCausalLM(T.MistralConfig(sliding_window=None, **dec))
    elif name == "mixtral":  # mixture of experts: transformers counts tokens per expert with integer histc
        m = T.MixtralForCausalLM(
            T.MixtralConfig(sliding_window=None, num_local_experts=4, num_experts_per_tok=2, **dec)
        )
    else:
        m = T.T5ForConditionalGeneration(
            T.T5Config(
                vocab_size=VOCAB,
                d_model=64,
                d_kv=16,
                d_ff=128,
                num_layers=2,
                num_decoder_layers=2,
                num_heads=4,
                decoder_start_token_id=0,
                pad_token_id=0,
                eos_token_id=1,
            )
        )
    return m.eval()


@pytest.fixture(autouse=True)
def _native_only():
    with fallback_enabled(False), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def prompts(batch, pad_left=True):
    ids = torch.randint(3, VOCAB, (batch, 7), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    if batch > 1:  # the second prompt is 3 tokens shorter
        sl = slice(0, 3) if pad_left else slice(4, 7)
        ids[1, sl], mask[1, sl] = 0, 0
    return ids, mask


def generate_both(cpu_model, ids, mask, **kw):
    kw = dict(max_new_tokens=8, do_sample=False, pad_token_id=0, **kw)
    gpu_model = copy.deepcopy(cpu_model).to(W)
    with torch.no_grad():
        expected = cpu_model.generate(ids, attention_mask=mask, **kw)
        got = gpu_model.generate(ids.to(W), attention_mask=mask.to(W), **kw)
    return expected, got.cpu(), gpu_model


@pytest.mark.parametrize("name", ARCHS)
def test_greedy_generate_and_logits_match_cpu(name):
    m = build(name)
    ids, mask = prompts(1)
    expected, got, mw = generate_both(m, ids, mask, use_cache=True)
    assert expected.shape[1] > ids.shape[1] or name == "t5"
    assert torch.equal(got, expected), (got, expected)
    kw = dict(input_ids=ids, attention_mask=mask)
    if name == "t5":
        kw["decoder_input_ids"] = expected[:, :5]
    with torch.no_grad():
        a = m(**kw).logits
        b = mw(**{k: v.to(W) for k, v in kw.items()}).logits.cpu()
    torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("use_cache", [True, False])
def test_llama_left_padded_batch(use_cache):
    m = build("llama")
    ids, mask = prompts(2, pad_left=True)
    expected, got, mw = generate_both(m, ids, mask, use_cache=use_cache)
    assert torch.equal(got, expected), (got, expected)
    with torch.no_grad():
        a = m(input_ids=ids, attention_mask=mask).logits
        b = mw(input_ids=ids.to(W), attention_mask=mask.to(W)).logits.cpu()
    keep = mask.bool()  # padded positions attend to nothing useful; compare the real tokens
    torch.testing.assert_close(b[keep], a[keep], rtol=1e-4, atol=1e-4)


def test_llama_eager_attention_no_cache():
    m = build("llama")
    m.set_attn_implementation("eager")
    assert m.config._attn_implementation == "eager"
    ids, mask = prompts(2, pad_left=True)
    expected, got, _ = generate_both(m, ids, mask, use_cache=False)
    assert torch.equal(got, expected), (got, expected)


def test_t5_right_padded_batch():
    m = build("t5")
    ids, mask = prompts(2, pad_left=False)
    expected, got, _ = generate_both(m, ids, mask, use_cache=True)
    assert torch.equal(got, expected), (got, expected)

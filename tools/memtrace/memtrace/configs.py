"""Random training-step configurations for the agreement test: family x method (full, LoRA with
varied targets, ranks and dropout, QLoRA-shaped NF4 bases) x checkpointing x attention x loss x
optimizer x batch x sequence (attention: flash, SDPA, eager or SDPA's math fallback; the loss:
HF at 4.49, at 4.46-4.48 or before 4.46, LitGPT chunked, Liger fused, TRL's chunked NLL,
torchtune's chunked output or Megatron-Core's), at dimensions
small enough for a CPU step in ~0.1 s; then n // 10 draws of Megatron-Core's own decoder layer
(NeMo 2), then n // 10 of Unsloth's (memtrace.unsloth)."""

from __future__ import annotations

import random

from memtrace.model import FAMILIES

MODULES = {
    "llama": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    "phi3": ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"],
    "phi": ["q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"],
    "gpt_neox": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
    "gpt2": ["c_attn", "c_proj", "c_fc"],
}
MEGATRON_MODULES = ["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"]


def modules(family):
    return MODULES.get(family, MODULES["llama"])


def random_configs(n, seed=15):
    rnd = random.Random(seed)
    # baichuan is the llama layer under a NormHead (tests/test_remote_code.py checks the head);
    # left out of the rotation so the sampled configurations stay those of the other families.
    fams = sorted(f for f in FAMILIES if f != "baichuan")
    out = []
    for k in range(n):
        fam = fams[k % len(fams)]
        heads = rnd.choice([2, 4])
        head_dim = rnd.choice([8, 16])
        kv = heads if fam in ("gpt_neox", "gpt2", "phi") else rnd.choice([1, 2, heads])
        kv = min(kv, heads)
        c = dict(family=fam, hidden=heads * head_dim * rnd.choice([2, 4]), layers=rnd.choice([1, 2, 3]),
                 heads=heads, kv_heads=kv, head_dim=head_dim,
                 intermediate=rnd.choice([64, 96, 128]), vocab=rnd.choice([128, 256, 384]),
                 tied=rnd.random() < 0.3 or fam == "gpt2",
                 method=rnd.choice(["full", "lora", "lora", "qlora"]),
                 grad_ckpt=rnd.choice(["none", "full"]), attn=rnd.choice(["sdpa", "eager", "flash"]),
                 loss=rnd.choice(["hf", "hf", "chunked", "fused"]),
                 optim=rnd.choice(["adamw_foreach", "adamw_fused"]),
                 batch=rnd.choice([1, 2, 3]), seq=rnd.choice([16, 32, 48]), seed=k)
        if c["method"] != "full":
            mods = modules(fam)
            c["lora_targets"] = sorted(rnd.sample(mods, rnd.randint(1, len(mods))))
            c["lora_rank"] = rnd.choice([2, 4, 8])
            c["lora_dropout"] = rnd.choice([0.0, 0.0, 0.1])
        if c["method"] == "qlora":
            c["double_quant"] = rnd.random() < 0.7
            c["bnb_saves_input"] = rnd.random() < 0.3
        out.append(c)
    # Megatron-Core's loss (model.megatron_loss) and torchtune's chunked output
    # (model.chunked_output_loss) on part of the HF-loss draws, from a stream of their own so the
    # configurations drawn above stay what they were.
    lrnd = random.Random(seed * 7919 + 1)
    for c in out:
        if c["loss"] == "hf":
            u = lrnd.random()
            c["loss"] = "megatron" if u < 0.4 else "chunked_output" if u < 0.6 else "hf"
    # torch SDPA's math fallback (layers.math_attention) on part of the SDPA draws, likewise.
    arnd = random.Random(seed * 7919 + 3)
    for c in out:
        if c["attn"] == "sdpa" and arnd.random() < 0.3:
            c["attn"] = "math"
    # The shifted-copy HF loss of transformers <= 4.45 (model.hf_shifted_loss) on part of the
    # remaining HF-loss draws, likewise.
    hrnd = random.Random(seed * 7919 + 4)
    for c in out:
        if c["loss"] == "hf" and hrnd.random() < 0.4:
            c["loss"] = "hf_shifted"
    # The HF loss of transformers 4.46-4.48 (model.hf_shifted_kept_loss: the shifted copy beside
    # the caller's model-dtype logits) on part of the HF-loss draws still left, likewise.
    krnd = random.Random(seed * 7919 + 5)
    for c in out:
        if c["loss"] == "hf" and krnd.random() < 0.4:
            c["loss"] = "hf_shifted_kept"
    # TRL's chunked NLL loss (model.chunked_nll_loss, SFTConfig's default loss_type) on part of
    # the Liger-fused draws, likewise, with its chunk size (TRL's 256 rows, or fewer so the
    # small draws run several chunks).
    nrnd = random.Random(seed * 7919 + 7)
    for c in out:
        if c["loss"] == "fused" and nrnd.random() < 0.5:
            c["loss"] = "chunked_nll"
            c["nll_chunk"] = nrnd.choice([16, 32, 256])
    # Megatron-Core's TE decoder layer as NeMo 2 runs it (model.CausalLM megatron_layer,
    # memtrace.megatron): n // 10 draws appended from a stream of their own, so the draws above
    # stay what they were. NeMo's LoRA: targets among its four module names, adapters in the
    # model dtype, dropout 0; its loss is Megatron's; nothing recomputed.
    mrnd = random.Random(seed * 7919 + 2)
    for k in range(n // 10):
        heads = mrnd.choice([2, 4])
        head_dim = mrnd.choice([8, 16])
        c = dict(family=mrnd.choice(["llama", "mistral", "qwen2"]), megatron_layer=True,
                 hidden=heads * head_dim * mrnd.choice([2, 4]), layers=mrnd.choice([1, 2, 3]),
                 heads=heads, kv_heads=min(heads, mrnd.choice([1, 2, heads])), head_dim=head_dim,
                 intermediate=mrnd.choice([64, 96, 128]), vocab=mrnd.choice([128, 256, 384]),
                 tied=mrnd.random() < 0.3, method=mrnd.choice(["full", "lora"]), grad_ckpt="none",
                 attn="flash", loss="megatron",
                 optim=mrnd.choice(["adamw_foreach", "adamw_fused"]),
                 batch=mrnd.choice([1, 2, 3]), seq=mrnd.choice([16, 32, 48]), seed=n + k)
        if c["method"] == "lora":
            mods = MEGATRON_MODULES
            c["lora_targets"] = sorted(mrnd.sample(mods, mrnd.randint(1, len(mods))))
            c["lora_rank"] = mrnd.choice([2, 4, 8])
            c["lora_dropout"] = 0.0
            c["adapter_dtype"] = "bf16"
        out.append(c)
    # Unsloth's decoder layer (model.CausalLM unsloth_layer, memtrace.unsloth): n // 10 draws
    # appended from a stream of their own, after the Megatron ones, so every draw above stays
    # what it was. LoRA or QLoRA (double-quant NF4, as fast_dequantize needs; bitsandbytes new
    # enough to keep no input), dropout 0 so patch_peft_model may fuse; all seven Llama modules
    # in ~60 % of the draws (every group fused, bar Qwen2's biased q/k/v), random subsets
    # otherwise (unfused groups run PEFT's modules); flash attention; no Megatron loss.
    urnd = random.Random(seed * 7919 + 6)
    for k in range(n // 10):
        heads = urnd.choice([2, 4])
        head_dim = urnd.choice([8, 16])
        c = dict(family=urnd.choice(["llama", "mistral", "qwen2", "qwen3"]), unsloth_layer=True,
                 hidden=heads * head_dim * urnd.choice([2, 4]), layers=urnd.choice([1, 2, 3]),
                 heads=heads, kv_heads=min(heads, urnd.choice([1, 2, heads])), head_dim=head_dim,
                 intermediate=urnd.choice([64, 96, 128]), vocab=urnd.choice([128, 256, 384]),
                 tied=urnd.random() < 0.3, method=urnd.choice(["lora", "qlora"]),
                 grad_ckpt=urnd.choice(["none", "full"]), attn="flash",
                 loss=urnd.choice(["hf", "hf_shifted", "chunked", "fused", "chunked_output"]),
                 optim=urnd.choice(["adamw_foreach", "adamw_fused"]),
                 batch=urnd.choice([1, 2, 3]), seq=urnd.choice([16, 32, 48]), seed=n + n // 10 + k)
        mods = MODULES["llama"]
        if urnd.random() < 0.6:
            c["lora_targets"] = sorted(mods)
        else:
            c["lora_targets"] = sorted(urnd.sample(mods, urnd.randint(1, len(mods))))
        c["lora_rank"] = urnd.choice([2, 4, 8])
        c["lora_dropout"] = 0.0
        out.append(c)
    # Unsloth's xformers backend on part of its draws, from a stream of their own.
    xrnd = random.Random(seed * 7919 + 8)
    for c in out:
        if c.get("unsloth_layer") and xrnd.random() < 0.4:
            c["attn"] = "xformers"
    return out

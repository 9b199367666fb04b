"""Random training-step configurations for the agreement test: family x method (full, LoRA with
varied targets, ranks and dropout, QLoRA-shaped NF4 bases) x checkpointing x attention x loss x
optimizer x batch x sequence (attention: flash, SDPA, eager or SDPA's math fallback; the loss:
HF, LitGPT chunked, Liger fused, torchtune's chunked output or Megatron-Core's), at dimensions
small enough for a CPU step in ~0.1 s."""

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
    arnd = random.Random(seed * 7919 + 2)
    for c in out:
        if c["attn"] == "sdpa" and arnd.random() < 0.3:
            c["attn"] = "math"
    return out

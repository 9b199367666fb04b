"""LitGPT's LoRA/QLoRA fine-tuning step, ported for what autograd and the loop keep.

Sources, at the commit the config-hub QLoRA table was measured with (Lightning-AI/litgpt
43c44323, Apr 2024; pyproject: lightning 2.3.0.dev20240328, bitsandbytes 0.42.0):

  litgpt/model.py      RMSNorm, CausalSelfAttention (fused qkv, view/permute/split, GQA expand,
                       reshape copies), apply_rope with the fp32 rope cache, LLaMAMLP/GemmaMLP,
                       Block (sequential residual), GPT (embedding scale for Gemma)
  litgpt/lora.py       LoRAQKVLinear (one lora_dropout(x), lora_A, grouped conv1d for lora_B,
                       zero_pad's new_zeros + index_copy), GPT.forward(lm_head_chunk_size=128)
  litgpt/utils.py      chunked_cross_entropy (one cross_entropy per 128-token chunk, model dtype)
  litgpt/finetune/lora.py  fit(): `logits = model(...)`, `logits[-1] = logits[-1][..., :-1, :]`,
                       `loss = chunked_cross_entropy(...)`, `fabric.backward(loss / accum)`, then
                       `loss = running_loss.compute().item()` (log_interval 1): `logits` alone
                       holds the graph until the next forward returns
  lightning fabric/wrappers.py  _FabricModule.forward: precision.convert_output hands every
                       floating output back in torch.get_default_dtype() (fp32): fabric_forward
  lightning fabric/plugins/precision/bitsandbytes.py  every nn.Linear (lm_head included) becomes
                       a 4-bit linear quantized from `weight.to(torch.half)`, compute dtype bf16
  bitsandbytes 0.42.0 autograd/_functions.py MatMul4Bit: dequantize_4bit(B).to(A.dtype), F.linear,
                       ctx.tensors = (A, B) when an input needs a gradient; backward dequantizes
                       again. PagedAdamW's states live in managed memory, outside the allocator:
                       the step here keeps none.

`method` "lora" replaces the 4-bit linears with frozen bf16 ones (a `bf16-true` LoRA run);
`method` "full" trains bf16 linears, norms and embedding with no adapters and runs
litgpt/finetune/full.py's step (same fit() at 43c44323, a509064d, 00af8b0d): `logits =
model(input_ids)` (one lm_head call), then chunked_cross_entropy(logits[..., :-1, :], ...),
whose "lm_head wasn't chunked" branch reshapes and splits the rows into 128-row chunks.
CUDA-only kernels are emulated by what they keep (memtrace.layers: flash attention, dropout).

  /usr/bin/python3 -m memtrace.litgpt '{"hidden": 4096, ...}'
"""

from __future__ import annotations

import json
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from memtrace import layers as Ly
from memtrace.tracker import LiveBytes

BF16 = torch.bfloat16


class _MatMul4BitFp16(torch.autograd.Function):
    """bitsandbytes 0.42.0 MatMul4Bit under Fabric's plugin: the quant state is fp16, so the
    dequantized weight (fp16) is followed by its .to(bf16) copy while it is alive."""

    @staticmethod
    def forward(ctx, a, packed, shape):
        w16 = torch.empty(shape, dtype=torch.float16).fill_(0.01)
        w = w16.to(a.dtype)
        del w16
        out = F.linear(a, w)
        del w
        ctx.shape = shape
        ctx.save_for_backward(packed)
        ctx.tensors = (a,) if ctx.needs_input_grad[0] else (None,)
        return out

    @staticmethod
    def backward(ctx, grad):
        (packed,) = ctx.saved_tensors
        w16 = torch.empty(ctx.shape, dtype=torch.float16).fill_(0.01)
        w = w16.to(grad.dtype)
        del w16
        return grad @ w, None, None


class Linear4bit(nn.Module):
    """NF4 without double quantization (`bnb.nf4`): packed n/2 bytes + fp32 absmax per 64."""

    def __init__(self, d_in, d_out):
        super().__init__()
        n = d_in * d_out
        self.packed = nn.Parameter(torch.zeros((n + 1) // 2, dtype=torch.uint8),
                                   requires_grad=False)
        self.absmax = nn.Parameter(torch.zeros((n + 63) // 64, dtype=torch.float32),
                                   requires_grad=False)
        self.shape = (d_out, d_in)

    def forward(self, x):
        return _MatMul4BitFp16.apply(x, self.packed, self.shape)


class FrozenLinear(nn.Module):
    """LoRA's base under `bf16-true` (no quantize): a frozen bf16 nn.Linear; F.linear keeps the
    weight (a parameter), not the input."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.full((d_out, d_in), 0.01, dtype=BF16), requires_grad=False)

    def forward(self, x):
        return F.linear(x, self.weight)


class TrainedLinear(FrozenLinear):
    """A full fine-tune's bf16 nn.Linear: F.linear keeps its input and weight."""

    def __init__(self, d_in, d_out):
        super().__init__(d_in, d_out)
        self.weight.requires_grad_(True)


def full(c):
    return c.get("method", "qlora") == "full"


def base_linear(c, d_in, d_out):
    """`method` "qlora" (default): Fabric's 4-bit linear; "lora": the bf16 model's own; "full":
    the same, trained."""
    if full(c):
        return TrainedLinear(d_in, d_out)
    return FrozenLinear(d_in, d_out) if c.get("method", "qlora") == "lora" else Linear4bit(d_in, d_out)


class RMSNorm(nn.Module):
    """litgpt/model.py RMSNorm (torch.mean's backward keeps only sizes on torch 2.x)."""

    def __init__(self, dim, eps=1e-5, unit_offset=False, trained=False):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, dtype=BF16), requires_grad=trained)
        self.eps, self.unit_offset = eps, unit_offset

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        norm_x = Ly.mean_last(x * x)
        x_normed = x * torch.rsqrt(norm_x + self.eps)
        x_normed = x_normed.to(dtype=dtype)
        if self.unit_offset:
            return x_normed * (1 + self.weight)
        return x_normed * self.weight


def apply_rope(x, cos, sin):
    head_size = x.size(-1)
    x1 = x[..., : head_size // 2]
    x2 = x[..., head_size // 2:]
    rotated = torch.cat((-x2, x1), dim=-1)
    roped = (x * cos) + (rotated * sin)
    return roped.to(dtype=x.dtype)


class LoRAQKVLinear(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, hs, nh, ng, r = c["hidden"], c["head_dim"], c["heads"], c["kv_heads"], c["lora_r"]
        self.out_features = (nh + 2 * ng) * hs
        self.linear = base_linear(c, h, self.out_features)
        self.qkv_shapes = [hs * nh, hs * ng]  # q and v enabled (lora_query, lora_value)
        self.lora_A = nn.Parameter(torch.full((2 * r, h), 0.01, dtype=BF16))
        self.lora_B = nn.Parameter(torch.full((sum(self.qkv_shapes), r), 0.01, dtype=BF16))
        self.r, self.p, self.scaling = r, c["lora_dropout"], c.get("lora_alpha", 16) / r
        q_per_kv = nh // ng
        total = q_per_kv + 2
        ind = range(self.out_features)
        q_ind = [x for x in ind if (x // hs) % total < total - 2]
        v_ind = [x for x in ind if (x // hs) % total == total - 1]
        self.lora_ind = q_ind + v_ind
        self.mha = nh == ng

    def conv1d(self, inp, weight):
        # F.conv1d(groups=2) keeps its input and weight: the same tensors as a per-group matmul.
        a = inp.chunk(2, dim=1)
        w = weight.split(self.qkv_shapes)
        return torch.cat([(ai.transpose(-2, -1) @ wi.squeeze(-1).t()).transpose(-2, -1)
                          for ai, wi in zip(a, w)], dim=1)

    def zero_pad(self, x):
        x = x.transpose(0, 1)
        result = x.new_zeros((*x.shape[:-1], self.out_features))
        result = result.view(-1, self.out_features)
        result = result.index_copy(1, torch.tensor(self.lora_ind), x.reshape(-1, sum(self.qkv_shapes)))
        return result.view((*x.shape[:-1], self.out_features)).transpose(0, 1)

    def forward(self, x):
        pretrained = self.linear(x)
        after_A = F.linear(Ly.dropout(x, self.p), self.lora_A)
        after_B = self.conv1d(after_A.transpose(-2, -1), self.lora_B.unsqueeze(-1)).transpose(-2, -1)
        lora = self.zero_pad(after_B) * self.scaling
        return pretrained + lora


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        qkv = (c["heads"] + 2 * c["kv_heads"]) * c["head_dim"]
        self.attn = base_linear(c, c["hidden"], qkv) if full(c) else LoRAQKVLinear(c)
        self.proj = base_linear(c, c["heads"] * c["head_dim"], c["hidden"])

    def forward(self, x, cos, sin):
        c = self.c
        B, T, _ = x.size()
        nh, ng, hs = c["heads"], c["kv_heads"], c["head_dim"]
        qkv = self.attn(x)
        q_per_kv = nh // ng
        qkv = qkv.view(B, T, ng, q_per_kv + 2, hs).permute(0, 2, 3, 1, 4)
        q, k, v = qkv.split((q_per_kv, 1, 1), dim=2)
        if ng != nh:
            k = k.expand(B, ng, q_per_kv, T, hs)
            v = v.expand(B, ng, q_per_kv, T, hs)
        q = q.reshape(B, -1, T, hs)
        k = k.reshape(B, -1, T, hs)
        v = v.reshape(B, -1, T, hs)
        n = c.get("rope_n_elem", hs)
        q_roped = apply_rope(q[..., :n], cos, sin)
        k_roped = apply_rope(k[..., :n], cos, sin)
        q = torch.cat((q_roped, q[..., n:]), dim=-1)
        k = torch.cat((k_roped, k[..., n:]), dim=-1)
        y = Ly.flash_attention(q, k, v)  # SDPA, is_causal: (b, h, s, d) view of (b, s, h, d)
        y = y.transpose(1, 2)
        y = y.reshape(B, T, hs * nh)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc_1 = base_linear(c, c["hidden"], c["intermediate"])
        self.fc_2 = base_linear(c, c["hidden"], c["intermediate"])
        self.proj = base_linear(c, c["intermediate"], c["hidden"])
        self.gelu = c.get("gelu", False)

    def forward(self, x):
        x_fc_1 = self.fc_1(x)
        x_fc_2 = self.fc_2(x)
        act = F.gelu(x_fc_1, approximate="tanh") if self.gelu else F.silu(x_fc_1)
        return self.proj(act * x_fc_2)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        off = c.get("gemma", False)
        self.norm_1 = RMSNorm(c["hidden"], unit_offset=off, trained=full(c))
        self.attn = Attention(c)
        self.norm_2 = RMSNorm(c["hidden"], unit_offset=off, trained=full(c))
        self.mlp = MLP(c)

    def forward(self, x, cos, sin):
        x = self.attn(self.norm_1(x), cos, sin) + x
        return self.mlp(self.norm_2(x)) + x


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.wte = nn.Embedding(c["vocab"], c["hidden"], dtype=BF16)
        self.wte.weight.requires_grad_(full(c))
        self.h = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.ln_f = RMSNorm(c["hidden"], unit_offset=c.get("gemma", False), trained=full(c))
        self.lm_head = base_linear(c, c["hidden"], c["vocab"])
        hs = c["head_dim"]
        theta = 1.0 / (10000 ** (torch.arange(0, hs, 2).float() / hs))
        idx = torch.outer(torch.arange(c["seq"]).float(), theta).repeat(1, 2)
        self.register_buffer("cos", torch.cos(idx))  # fp32, as build_rope_cache returns it
        self.register_buffer("sin", torch.sin(idx))

    def forward(self, idx, lm_head_chunk_size=128):
        """lora.py GPT.forward; lm_head_chunk_size=0 is validate()'s call: one full head."""
        T = idx.size(1)
        cos, sin = self.cos[:T], self.sin[:T]
        x = self.wte(idx)
        if self.c.get("gemma", False):
            x = x * (self.c["hidden"] ** 0.5)
        for block in self.h:
            x = block(x, cos, sin)
        x = self.ln_f(x)
        if lm_head_chunk_size > 0:
            return [self.lm_head(x_i) for x_i in x.split(lm_head_chunk_size, dim=1)]
        return self.lm_head(x)


def fabric_forward(m, ids, **kw):
    """lightning fabric/wrappers.py _FabricModule.forward (2.3.0.dev20240328, 2.4.0.dev20240728):
    the module runs under precision.forward_context() (default dtype bf16), then
    `precision.convert_output(output)` applies `_convert_fp_tensor` (`tensor.to(dst_type)`) with
    dst_type `torch.get_default_dtype()`, fp32 again outside that context, to every floating
    tensor of the output: the list of bf16 head chunks comes back as fp32 copies (HalfPrecision,
    BitsandbytesPrecision, MixedPrecision, FSDPPrecision alike). The bf16 list dies on return."""
    out = m(ids, **kw)
    if isinstance(out, list):
        return [t.to(torch.get_default_dtype()) for t in out]
    return out.to(torch.get_default_dtype())


def chunked_cross_entropy(logits, targets, ignore_index=-100):
    logit_chunks = [lc.reshape(-1, lc.size(-1)) for lc in logits]
    target_chunks = [tc.reshape(-1) for tc in targets.split(logits[0].size(1), dim=1)]
    loss_chunks = [F.cross_entropy(lc, tc, ignore_index=ignore_index, reduction="none")
                   for lc, tc in zip(logit_chunks, target_chunks)]
    non_masked = (targets != ignore_index).sum()
    return torch.cat(loss_chunks).sum() / max(1, non_masked)


def chunked_cross_entropy_whole(logits, targets, chunk_size=128, ignore_index=-100):
    """utils.py chunked_cross_entropy's "lm_head wasn't chunked" branch (finetune/full.py): the
    shifted rows reshaped (a copy when b > 1) and split into 128-row chunks."""
    logits = logits.reshape(-1, logits.size(-1))
    targets = targets.reshape(-1)
    loss_chunks = [F.cross_entropy(lc, tc, ignore_index=ignore_index, reduction="none")
                   for lc, tc in zip(logits.split(chunk_size), targets.split(chunk_size))]
    non_masked = (targets != ignore_index).sum()
    return torch.cat(loss_chunks).sum() / max(1, non_masked)


def measure(c, tracker=LiveBytes):
    """`tracker`: makes the LiveBytes to measure with (memtrace.peak_dump passes one that keeps
    the live set at the peak)."""
    torch.manual_seed(0)
    m = GPT(c)
    b, s, accum = c["batch"], c["seq"], c.get("accum", 4)
    params = [p for p in m.parameters() if p.requires_grad]
    tr = tracker()
    tr.adopt(list(m.parameters()) + list(m.buffers()))
    logits = loss = None
    peaks = []
    with tr:
        for it in range(c.get("iters", 3)):
            tr.reset_peak()
            tr.set_phase(f"forward{it}")
            ids = torch.randint(0, c["vocab"], (b, s))
            targets = ids.clone()
            if full(c):
                # finetune/full.py fit(): `logits = model(input_ids)`, then
                # chunked_cross_entropy(logits[..., :-1, :], targets[..., 1:]).
                logits = fabric_forward(m, ids, lm_head_chunk_size=0)
                tr.mark(f"fwd{it}")
                tr.set_phase(f"loss{it}")
                loss = chunked_cross_entropy_whole(logits[..., :-1, :], targets[..., 1:])
            else:
                logits = fabric_forward(m, ids)
                tr.mark(f"fwd{it}")
                tr.set_phase(f"loss{it}")
                logits[-1] = logits[-1][..., :-1, :]
                loss = chunked_cross_entropy(logits, targets[..., 1:])
            tr.mark(f"loss{it}")
            tr.set_phase(f"backward{it}")
            (loss / accum).backward()
            # fit(): `loss = running_loss.compute().item()` every log_interval iterations (1: the
            # TrainArgs default and every config-hub yaml at 43c44323, a509064d and 00af8b0d): the
            # name no longer holds the graph; `logits` does (its grad_fns reach every node) until
            # the next forward returns.
            loss = loss.detach().item()
            tr.mark(f"bwd{it}")
            if it % accum == accum - 1:
                with torch.no_grad():
                    for p in params:
                        p.add_(p.grad, alpha=-1e-4)
                for p in params:
                    p.grad = None
            peaks.append(tr.peak)
        # finetune/lora.py validate() (every eval.interval iterations, @torch.no_grad()), while
        # fit()'s `logits` and `loss` still hold the last training step: the full head, then
        # chunked_cross_entropy(logits[..., :-1, :], targets[..., 1:], chunk_size=0).
        if c.get("eval", False):
            tr.reset_peak()
            with torch.no_grad():
                ids = torch.randint(0, c["vocab"], (b, s))
                targets = ids.clone()
                vl = fabric_forward(m, ids, lm_head_chunk_size=0)
                vloss = F.cross_entropy(vl[..., :-1, :].reshape(-1, vl.size(-1)),
                                        targets[..., 1:].reshape(-1), ignore_index=-100)
                del vl, vloss
            peaks.append(tr.peak)
    static = sum(p.numel() * p.element_size() for p in m.parameters()) + sum(
        t.numel() * t.element_size() for t in m.buffers())
    return {"peaks": peaks, "static": static, "marks": tr.marks}


if __name__ == "__main__":
    c = json.loads(sys.argv[1])
    json.dump(measure(c), sys.stdout, indent=1)
    sys.stdout.write("\n")

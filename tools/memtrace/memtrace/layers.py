"""Building blocks ported from the Hugging Face transformers / PEFT / bitsandbytes code for what
autograd saves. Each class names the upstream function it follows; the operator sequence (casts,
views, in-place ops) is kept because it decides which tensors autograd keeps.

CUDA-only kernels are replaced by autograd Functions that save exactly what the CUDA kernel's
backward needs (flash attention, fused dropout mask, bitsandbytes 4-bit matmul)."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from memtrace.tracker import on_chip

BF16 = torch.bfloat16


def dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """F.dropout as CUDA runs it: aten::native_dropout, which saves a bool mask (1 B/element)."""
    if p == 0.0 or not training:
        return x
    return torch.native_dropout(x, p, True)[0]


class _MeanLast(torch.autograd.Function):
    """mean(-1, keepdim=True) with torch 2.x's autograd formula, which needs only the input's
    sizes (torch 1.13's derivatives.yaml saved the input itself: the fp32 pow(2) output of every
    RMSNorm would stay alive on 1.13 but not on the torch that trains on GPUs)."""

    @staticmethod
    def forward(ctx, x):
        ctx.n = x.shape[-1]
        return x.mean(-1, keepdim=True)

    @staticmethod
    def backward(ctx, g):
        return g.expand(*g.shape[:-1], ctx.n) / ctx.n


def mean_last(x):
    return _MeanLast.apply(x)


class RMSNorm(nn.Module):
    """LlamaRMSNorm (transformers models/llama/modeling_llama.py)."""

    def __init__(self, dim, eps=1e-6, dtype=BF16):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, dtype=dtype))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        variance = mean_last(x.pow(2))
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(dtype)


class GemmaRMSNorm(nn.Module):
    """GemmaRMSNorm (models/gemma/modeling_gemma.py): the scale (1 + w) is applied in fp32."""

    def __init__(self, dim, eps=1e-6, dtype=BF16):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim, dtype=dtype))
        self.eps = eps

    def _norm(self, x):
        return x * torch.rsqrt(mean_last(x.pow(2)) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


class LayerNorm(nn.LayerNorm):
    """nn.LayerNorm in the model dtype (GPT-2, GPT-NeoX, Phi): native_layer_norm saves its input,
    mean and rstd (fp32, one per row)."""

    def __init__(self, dim, eps=1e-5, dtype=BF16):
        super().__init__(dim, eps=eps, dtype=dtype)


class _MatMul4Bit(torch.autograd.Function):
    """bitsandbytes MatMul4Bit (bitsandbytes/autograd/_functions.py): forward dequantizes the NF4
    weight to the compute dtype, multiplies, and keeps `ctx.tensors = (A, B)` in versions that
    save the input (<= 0.43.1: `save_input=True`); 0.43.2+ keeps `(None, B)` (PR #1270): a frozen
    4-bit linear saves no input. `ctx.tensors` is a plain attribute, not save_for_backward, so
    autograd's release_variables() never frees it: A lives until the graph itself is dropped
    (the end of backward here, since the step deletes `loss`). Backward dequantizes again for
    grad_A = grad @ W."""

    @staticmethod
    def forward(ctx, a, packed, shape, dtype, save_input):
        w = _dequant(packed, shape, dtype)
        out = F.linear(a, w)
        del w
        ctx.shape, ctx.dtype = shape, dtype
        ctx.save_for_backward(packed)
        ctx.tensors = (a,) if save_input else (None,)
        return out

    @staticmethod
    def backward(ctx, grad):
        (packed,) = ctx.saved_tensors
        w = _dequant(packed, ctx.shape, ctx.dtype)
        return grad @ w, None, None, None, None


def _dequant(packed, shape, dtype):
    # NF4 dequantization allocates the full-size weight in the compute dtype (bitsandbytes
    # functional.dequantize_4bit: `out = torch.empty(shape, dtype=...)`); values are irrelevant here.
    return torch.empty(shape, dtype=dtype).fill_(0.01)


class Linear4bit(nn.Module):
    """bitsandbytes Linear4bit storage: packed NF4 (numel/2 bytes) plus blockwise constants.
    Block 64; with double quantization the absmax is itself 8-bit with fp32 constants per 256
    blocks (QLoRA paper section 2; bitsandbytes functional.quantize_4bit)."""

    def __init__(self, d_in, d_out, dtype=BF16, double_quant=True, save_input=False):
        super().__init__()
        n = d_in * d_out
        blocks = (n + 63) // 64
        self.packed = nn.Parameter(torch.zeros((n + 1) // 2, dtype=torch.uint8), requires_grad=False)
        if double_quant:
            self.absmax = nn.Parameter(torch.zeros(blocks, dtype=torch.uint8), requires_grad=False)
            self.absmax2 = nn.Parameter(torch.zeros((blocks + 255) // 256, dtype=torch.float32),
                                        requires_grad=False)
        else:
            self.absmax = nn.Parameter(torch.zeros(blocks, dtype=torch.float32), requires_grad=False)
        self.shape = (d_out, d_in)
        self.dtype = dtype
        self.save_input = save_input
        self.bias = None

    def forward(self, x):
        return _MatMul4Bit.apply(x, self.packed, self.shape, self.dtype, self.save_input)


class LoraLinear(nn.Module):
    """peft.tuners.lora.layer.Linear.forward (PEFT 0.13): result = base(x); x = x.to(A.dtype);
    result = result + B(A(dropout(x))) * scaling; result.to(previous dtype). Dropout is nn.Dropout
    when lora_dropout > 0, else nn.Identity. Adapters are created in fp32 (`adapter_dtype`) unless
    `autocast_adapter_dtype=False`; under autocast the fp32 weights are cast to bf16 for the matmul.
    """

    def __init__(self, base, d_in, d_out, r, alpha, p, adapter_dtype):
        super().__init__()
        self.base = base
        for prm in base.parameters():
            prm.requires_grad_(False)
        self.lora_A = nn.Linear(d_in, r, bias=False, dtype=adapter_dtype)
        self.lora_B = nn.Linear(r, d_out, bias=False, dtype=adapter_dtype)
        nn.init.normal_(self.lora_B.weight, std=0.02)  # nonzero so every gradient flows
        self.scaling = alpha / r
        self.p = p

    def forward(self, x):
        result = self.base(x)
        torch_result_dtype = result.dtype
        x = x.to(self.lora_A.weight.dtype)
        result = result + self.lora_B(self.lora_A(dropout(x, self.p))) * self.scaling
        return result.to(torch_result_dtype)


class _FlashAttention(torch.autograd.Function):
    """Flash-attention 2 / SDPA flash and mem-efficient backends: backward needs q, k, v, the
    output and the log-sum-exp (fp32, one per head per query); no s x s matrix is kept.
    Tensors are (b, heads, s, d); k and v may have fewer heads (GQA, flash-attn 2)."""

    @staticmethod
    def forward(ctx, q, k, v):
        b, h, s, d = q.shape
        rep = h // k.shape[1]
        # out is laid out (b, s, h, d) as the kernels write it; returned as a (b, h, s, d) view.
        out = torch.empty(b, s, h, d, dtype=q.dtype)
        lse = torch.empty(b, h, s, dtype=torch.float32)
        with on_chip():  # the kernel's tiles live in on-chip memory, not in the allocator
            for i in range(h):
                kk, vv = k[:, i // rep], v[:, i // rep]
                sc = (q[:, i].float() @ kk.float().transpose(-1, -2)) / math.sqrt(d)
                sc = sc + torch.triu(torch.full((s, s), float("-inf")), 1)
                lse[:, i] = torch.logsumexp(sc, -1)
                out[:, :, i] = (torch.softmax(sc, -1) @ vv.float()).to(q.dtype)
                del sc
        ctx.save_for_backward(q, k, v, out, lse)
        return out.transpose(1, 2)

    @staticmethod
    def backward(ctx, g):
        q, k, v, out, lse = ctx.saved_tensors
        b, h, s, d = q.shape
        rep = h // k.shape[1]
        gq, gk, gv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
        with on_chip():
            for i in range(h):
                kk, vv = k[:, i // rep].float(), v[:, i // rep].float()
                sc = (q[:, i].float() @ kk.transpose(-1, -2)) / math.sqrt(d)
                sc = sc + torch.triu(torch.full((s, s), float("-inf")), 1)
                p = torch.exp(sc - lse[:, i, :, None])
                gi = g[:, i].float()
                gv[:, i // rep] += (p.transpose(-1, -2) @ gi).to(v.dtype)
                dp = gi @ vv.transpose(-1, -2)
                ds = p * (dp - (dp * p).sum(-1, keepdim=True)) / math.sqrt(d)
                gq[:, i] = (ds @ kk).to(q.dtype)
                gk[:, i // rep] += (ds.transpose(-1, -2) @ q[:, i].float()).to(k.dtype)
                del sc, p, dp, ds
        return gq, gk, gv


def flash_attention(q, k, v):
    return _FlashAttention.apply(q, k, v)


def repeat_kv(x, n_rep):
    """transformers repeat_kv: expand + reshape, a copy when n_rep > 1."""
    if n_rep == 1:
        return x
    b, kvh, s, d = x.shape
    return x[:, :, None, :, :].expand(b, kvh, n_rep, s, d).reshape(b, kvh * n_rep, s, d)


def causal_mask(s, dtype):
    """The additive causal mask transformers builds once per forward (min value above the diagonal)."""
    return torch.triu(torch.full((s, s), torch.finfo(dtype).min, dtype=dtype), 1)[None, None]


def eager_attention(q, k, v, n_rep, scaling, mask, p=0.0, softcap=None):
    """eager_attention_forward (models/llama/modeling_llama.py; Gemma-2's adds softcapping)."""
    k = repeat_kv(k, n_rep)
    v = repeat_kv(v, n_rep)
    w = torch.matmul(q, k.transpose(2, 3)) * scaling
    if softcap is not None:
        w = w / softcap
        w = torch.tanh(w)
        w = w * softcap
    w = w + mask
    w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
    w = dropout(w, p)
    out = torch.matmul(w, v)
    return out.transpose(1, 2).contiguous()


def math_attention(q, k, v, n_rep, scaling):
    """torch SDPA's math fallback, causal (aten/src/ATen/native/transformers/attention.cpp
    _scaled_dot_product_attention_math, torch 2.0-2.5): q and k^T each scaled by sqrt(scale)
    (copies), matmul (k and v of fewer heads reach q's heads: matmul's broadcast expands and its
    reshape copies, as repeat_kv does), the causal mask added in place, softmax in the input dtype,
    matmul with v; the caller's transpose(1, 2) + reshape copies the output."""
    k = repeat_kv(k, n_rep)
    v = repeat_kv(v, n_rep)
    sf = math.sqrt(scaling)
    w = torch.matmul(q * sf, k.transpose(-2, -1) * sf)
    w.add_(causal_mask(q.shape[-2], q.dtype)[0, 0])
    w = torch.softmax(w, dim=-1)
    return torch.matmul(w, v).transpose(1, 2).contiguous()


def sdpa_attention(q, k, v, n_rep):
    """sdpa_attention_forward (transformers integrations/sdpa_attention.py): repeat_kv, then
    torch SDPA (flash / efficient backend) and transpose(1, 2).contiguous() (a no-op copy-wise,
    the kernel output is already (b, s, h, d))."""
    k = repeat_kv(k, n_rep)
    v = repeat_kv(v, n_rep)
    return flash_attention(q, k, v).transpose(1, 2).contiguous()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    """apply_rotary_pos_emb (unsqueeze_dim=1)."""
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def rotary_cos_sin(b, s, dim, dtype, base=10000.0):
    """LlamaRotaryEmbedding.forward: fp32 angles, cos/sin cast to the model dtype, (b, s, dim)."""
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    pos = torch.arange(s, dtype=torch.float32)[None].expand(b, s)
    freqs = (inv[None, :, None].expand(b, -1, 1) @ pos[:, None, :]).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def gelu_tanh(x):
    """gelu_pytorch_tanh / gelu_new: aten::gelu(approximate='tanh') saves its input."""
    return F.gelu(x, approximate="tanh")

"""Megatron-Core's decoder layer as NeMo 2 builds it for Llama, Mistral and Qwen2: TransformerLayer
from get_gpt_layer_with_transformer_engine_spec (Megatron-LM d98e8a64
megatron/core/models/gpt/gpt_layer_specs.py), with one autograd.Function per TransformerEngine
module (TransformerEngine d0067d0d) that keeps exactly what TE's keeps:

  TELayerNormColumnParallelLinear  pytorch/module/layernorm_linear.py _LayerNormLinear: the input,
                                   rsigma (fp32, one per row; RMSNorm has no mu) and ln_out when
                                   the weight trains or return_layernorm_output hands it on
  TERowParallelLinear              pytorch/module/linear.py _Linear: the input when the weight
                                   trains (what nn.Linear keeps, so nn.Linear here)
  TEDotProductAttention            cuDNN fused attention: q, k, v, out and fp32 softmax stats
                                   (memtrace.layers._FlashAttention keeps the same)
  fused RoPE                       pytorch/attention/rope.py FusedRoPEFunc: only the freqs

and Megatron's own pieces: SwiGLUFunction (megatron/core/fusions/fused_bias_swiglu.py, keeps its
input), MLP.forward's unfused glu() and rope_utils._apply_rotary_pos_emb_bshd (NeMo's Mistral and
Qwen2 configs leave bias_activation_fusion and apply_rope_fusion at Megatron's False), and the
bias-dropout-add at p = 0 (NeMo's configs: hidden_dropout 0), a plain add.

LoRA as NeMo 8cfedd72 nemo/collections/llm/peft/lora.py LoRALinear wraps it: the base returns
(out, bias, ln_out) (return_layernorm_output for the LayerNormLinear ones), the adapter
(llm/peft/utils.py ParallelLinearAdapter: linear_in, identity, linear_out, x * alpha/dim, in the
model dtype, dropout 0) runs on ln_out.contiguous() or on the input, and the two outputs are added.

Megatron's tensors are [s, b, ...]; this port keeps the [b, s] order of the other blocks (the same
bytes per tensor, and the same contiguity of q, k, v relative to the fused projection)."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from memtrace import layers as L
from memtrace.tracker import on_chip


def _rmsnorm_fwd(x, w, eps, ln_out, rsigma):
    """TE rmsnorm_fwd: one kernel, its arithmetic on chip; writes ln_out and rsigma."""
    with on_chip():
        x32 = x.float()
        rs = torch.rsqrt(x32.pow(2).mean(-1) + eps)
        rsigma.copy_(rs)
        ln_out.copy_((x32 * rs[..., None] * w.float()).to(x.dtype))


def _rmsnorm_bwd(dy, x, rsigma, w, dx, dw):
    """TE rmsnorm_bwd: dx (and dgamma) from the kernel, its arithmetic on chip."""
    with on_chip():
        x32, dy32, rs = x.float(), dy.float(), rsigma[..., None]
        xhat = x32 * rs
        dxhat = dy32 * w.float()
        g = (dxhat - xhat * (dxhat * xhat).mean(-1, keepdim=True)) * rs
        dx.copy_(g.to(dx.dtype))
        if dw is not None:
            dw.copy_((dy32 * xhat).reshape(-1, x.shape[-1]).sum(0).to(dw.dtype))


class _TELayerNormLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, ln_w, w, b, eps, return_ln):
        ln_out = torch.empty_like(x)
        rsigma = torch.empty(x.shape[:-1], dtype=torch.float32)
        _rmsnorm_fwd(x, ln_w, eps, ln_out, rsigma)
        out = F.linear(ln_out, w, b)
        # layernorm_linear.py: ln_out is cleared unless the weight trains or it is returned.
        keep = ln_out if (w.requires_grad or return_ln) else None
        ctx.save_for_backward(x, rsigma, ln_w, w, keep)
        ctx.has_bias = b is not None
        ctx.return_ln = return_ln
        if return_ln:
            return out, ln_out
        del ln_out
        return out

    @staticmethod
    def backward(ctx, g, g_ln=None):
        x, rsigma, ln_w, w, ln_out = ctx.saved_tensors
        h = x.shape[-1]
        dln = g @ w  # dgrad GEMM
        if g_ln is not None:
            dln += g_ln  # the returned ln_out's gradient joins before the norm's backward
        dw = dbias = None
        if ctx.needs_input_grad[2]:
            dw = g.reshape(-1, g.shape[-1]).t() @ ln_out.reshape(-1, h)  # wgrad GEMM
        if ctx.has_bias and ctx.needs_input_grad[3]:
            dbias = g.reshape(-1, g.shape[-1]).sum(0)
        dx = torch.empty_like(x)
        dlnw = torch.empty_like(ln_w) if ctx.needs_input_grad[1] else None
        _rmsnorm_bwd(dln, x, rsigma, ln_w, dx, dlnw)
        del dln
        return dx, dlnw, dw, dbias, None, None


class TELayerNormLinear(nn.Module):
    def __init__(self, d_in, d_out, bias, dtype, eps=1e-5):
        super().__init__()
        self.layer_norm_weight = nn.Parameter(torch.ones(d_in, dtype=dtype))
        self.weight = nn.Parameter(torch.empty(d_out, d_in, dtype=dtype))
        nn.init.normal_(self.weight, std=0.02)
        self.bias = nn.Parameter(torch.zeros(d_out, dtype=dtype)) if bias else None
        self.eps = eps
        self.return_layernorm_output = False

    def forward(self, x):
        return _TELayerNormLinear.apply(x, self.layer_norm_weight, self.weight, self.bias, self.eps,
                                        self.return_layernorm_output)


class TENorm(nn.Module):
    """TransformerBlock.final_layernorm: TENorm, te.pytorch.RMSNorm (keeps input and rsigma)."""

    def __init__(self, dim, dtype, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, dtype=dtype))
        self.eps = eps

    def forward(self, x):
        return _TERMSNorm.apply(x, self.weight, self.eps)


class _TERMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, eps):
        out = torch.empty_like(x)
        rsigma = torch.empty(x.shape[:-1], dtype=torch.float32)
        _rmsnorm_fwd(x, w, eps, out, rsigma)
        ctx.save_for_backward(x, rsigma, w)
        return out

    @staticmethod
    def backward(ctx, g):
        x, rsigma, w = ctx.saved_tensors
        dx = torch.empty_like(x)
        dw = torch.empty_like(w) if ctx.needs_input_grad[1] else None
        _rmsnorm_bwd(g, x, rsigma, w, dx, dw)
        return dx, dw, None


class Adapter(nn.Module):
    """ParallelLinearAdapter at TP 1: linear_in (ColumnParallelLinear) and linear_out
    (RowParallelLinear) keep their inputs as nn.Linear does; then x * (alpha / dim)."""

    def __init__(self, d_in, d_out, r, alpha, dtype):
        super().__init__()
        self.lora_linear_in = nn.Linear(d_in, r, bias=False, dtype=dtype)
        self.lora_linear_out = nn.Linear(r, d_out, bias=False, dtype=dtype)
        nn.init.normal_(self.lora_linear_out.weight, std=0.02)  # nonzero so every gradient flows
        self.scale = alpha / r

    def forward(self, x):
        return self.lora_linear_out(self.lora_linear_in(x)) * self.scale


class LoRALinear(nn.Module):
    """nemo llm/peft/lora.py LoRALinear.forward."""

    def __init__(self, base, adapter):
        super().__init__()
        self.base, self.adapter = base, adapter
        if isinstance(base, TELayerNormLinear):
            base.return_layernorm_output = True

    def forward(self, x):
        if isinstance(self.base, TELayerNormLinear):
            out, ln_out = self.base(x)
        else:
            out, ln_out = self.base(x), x
        a = self.adapter(ln_out.contiguous())
        return out + a.reshape(out.shape)


def fused_rope(t, freqs):
    return _FusedRoPE.apply(t, freqs)


class _FusedRoPE(torch.autograd.Function):
    """TE FusedRoPEFunc (pytorch/attention/rope.py): ctx keeps freqs; the kernel writes a new t."""

    @staticmethod
    def forward(ctx, t, freqs):
        out = torch.empty_like(t)
        with on_chip():
            out.copy_(_rope_math(t.float(), freqs[:, None, :]).to(t.dtype))
        ctx.save_for_backward(freqs)
        return out

    @staticmethod
    def backward(ctx, g):
        (freqs,) = ctx.saved_tensors
        dt = torch.empty_like(g)
        with on_chip():
            f = freqs[:, None, :]
            x1, x2 = g.float().chunk(2, -1)
            s1, s2 = torch.sin(f).chunk(2, -1)
            dt.copy_((g.float() * torch.cos(f) + torch.cat((x2 * s2, -x1 * s1), -1)).to(g.dtype))
        return dt, None


def _rotate_half(x):
    """rope_utils._rotate_half (not interleaved)."""
    x1, x2 = torch.chunk(x, 2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _rope_math(t, f):
    return t * torch.cos(f) + _rotate_half(t) * torch.sin(f)


def unfused_rope(t, freqs):
    """rope_utils._apply_rotary_pos_emb_bshd: cos_/sin_ made per call in t's dtype, kept by the
    muls; the final cat with the empty t_pass copies."""
    rot = freqs.shape[-1]
    t, t_pass = t[..., :rot], t[..., rot:]
    cos_ = torch.cos(freqs).to(t.dtype)[:, None, :]
    sin_ = torch.sin(freqs).to(t.dtype)[:, None, :]
    t = (t * cos_) + (_rotate_half(t) * sin_)
    return torch.cat((t, t_pass), dim=-1)


class MegatronLayer(nn.Module):
    def __init__(self, c, spec, make_linear, dtype):
        super().__init__()
        h, hd = c["hidden"], c["head_dim"]
        self.nh, self.ng, self.hd = c["heads"], c["kv_heads"], hd
        q, kv, i = self.nh * hd, self.ng * hd, c["intermediate"]
        self.fused = spec.get("megatron_fusions", False)
        self.linear_qkv = make_linear("linear_qkv", h, q + 2 * kv, spec.get("qkv_bias", False),
                                      norm=True)
        self.linear_proj = make_linear("linear_proj", q, h, False)
        self.linear_fc1 = make_linear("linear_fc1", h, 2 * i, False, norm=True)
        self.linear_fc2 = make_linear("linear_fc2", i, h, False)

    def _forward_attention(self, x, freqs):
        """TransformerLayer._forward_attention (Megatron-LM d98e8a64): the attention's locals
        (linear_qkv's output through its q/k/v views, linear_proj's output) die when it returns
        the bias-dropout-add, before the MLP runs."""
        b, s, _ = x.shape
        # SelfAttention.get_query_key_value_tensors: view (.., ng, (np/ng + 2) * hn), split.
        mixed = self.linear_qkv(x).view(b, s, self.ng, (self.nh // self.ng + 2) * self.hd)
        qn = self.nh // self.ng * self.hd
        query, key, value = torch.split(mixed, [qn, self.hd, self.hd], dim=3)
        query = query.reshape(b, s, -1, self.hd)  # a copy when ng > 1
        rope = fused_rope if self.fused else unfused_rope
        query, key = rope(query, freqs), rope(key, freqs)
        # TE get_qkv_layout: v's strides differ from k's ('not_supported'), so q, k and v are
        # made contiguous: v is copied, q and k (new tensors) are already.
        query, key, value = [t.contiguous() for t in (query, key, value)]
        core = L.flash_attention(query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2))
        core = core.transpose(1, 2).reshape(b, s, -1)  # a view: the kernel wrote (b, s, h, d)
        out = self.linear_proj(core)
        return x + out  # bias-dropout-add, p = 0

    def forward(self, x, freqs):
        x = self._forward_attention(x, freqs)
        fc1 = self.linear_fc1(x)
        if self.fused:
            act = _SwiGLU.apply(fc1)
        else:
            # MLP.forward glu(): silu(x_glu) * (x_linear + glu_linear_offset)
            x_glu, x_linear = torch.chunk(fc1, 2, dim=-1)
            act = F.silu(x_glu) * (x_linear + 0.0)
        return x + self.linear_fc2(act)


class _SwiGLU(torch.autograd.Function):
    """Megatron SwiGLUFunction: keeps its input; swiglu/swiglu_back are jit-fused kernels."""

    @staticmethod
    def forward(ctx, y):
        out = torch.empty(*y.shape[:-1], y.shape[-1] // 2, dtype=y.dtype)
        with on_chip():
            y1, y2 = torch.chunk(y, 2, -1)
            out.copy_(F.silu(y1) * y2)
        ctx.save_for_backward(y)
        return out

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        dy = torch.empty_like(y)
        with on_chip():
            y1, y2 = torch.chunk(y.float(), 2, -1)
            sg = torch.sigmoid(y1)
            g32 = g.float()
            d1 = g32 * sg * (1 + y1 * (1 - sg)) * y2
            dy.copy_(torch.cat((d1, g32 * y1 * sg), -1).to(y.dtype))
        return dy


def rotary_freqs(s, hd):
    """RotaryEmbedding.forward: fp32 [s, 1, 1, hd] (here [s, hd]), alive through the step."""
    inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    freqs = torch.outer(torch.arange(s, dtype=torch.float32), inv)
    return torch.cat((freqs, freqs), dim=-1)

"""Unsloth's own decoder layer for Llama, Mistral, Qwen2 and Qwen3 (unsloth 2026.8.19), ported
for what it allocates and keeps: its hand-written LoRA autograd Functions, Triton RMSNorm and
RoPE, and fast_dequantize's global buffers. Reference only; the kernels' arithmetic is emulated
under tracker.on_chip() and only the tensors the real code allocates are allocated here.

  unsloth/models/llama.py   LlamaDecoderLayer_fast_forward (training branch),
                            LlamaAttention_fast_forward (also Qwen2's;
                            MistralAttention_fast_forward allocates the same),
                            LlamaModel_fast_forward (int32 position_ids, the shared RoPE cache,
                            the final fast_rms_layernorm), LlamaRotaryEmbedding (the cache),
                            FastLlamaModel.patch_peft_model (which groups get the fused Functions)
  unsloth/models/qwen3.py   Qwen3Attention_fast_forward: q_norm / k_norm on the (b, s, heads, hd)
                            views before the transpose
  unsloth/kernels/fast_lora.py      LoRA_QKV, LoRA_W, LoRA_MLP (apply_lora_mlp_swiglu)
  unsloth/kernels/utils.py          matmul_lora, fast_dequantize (CUDA branch) and its
                                    WEIGHT_BUFFERS / ABSMAX_BUFFERS
  unsloth/kernels/swiglu.py         swiglu_fg_kernel (new h), swiglu_DWf_DW_dfg_kernel (in place)
  unsloth/kernels/rms_layernorm.py  Fast_RMS_Layernorm (non-Gemma)
  unsloth/kernels/rope_embedding.py Fast_RoPE_Embedding_QK (the position_ids path)
  unsloth/utils/attention_dispatch.py run_attention, FLASH_DENSE backend (flash_attn_func)
  unsloth_zoo training_utils.py prepare_model_for_training (called by patch_peft_model through
                            prepare_model_for_kbit_training): LoRA weights upcast to fp32, and
                            with use_reentrant=True enable_input_require_grads

What the port keeps, per piece:

  Fast_RMS_Layernorm   forward: Y (rows x dim, X's dtype) and r (rows, fp32) new; saves the
                       reshaped X, W and r. backward: dY.reshape (a copy only when dY is not
                       contiguous); dX is written into dY (non-Gemma); nothing new.
  matmul_lora          out = X @ W.t() new (QLoRA: W dequantized into the global buffer);
                       XA = X @ A.t().to(dtype) (the bf16 copy of A lives during the mm), then
                       out.addmm_(XA, B.t().to(dtype)) (the copy of B lives during the addmm_);
                       XA dies on return.
  LoRA_QKV             forward: three matmul_lora; saves X and the six adapters. backward: six
                       bf16 adapter casts and six empty_like bf16 grads for the whole backward;
                       a T x r (then r x T) product per adapter gradient; per projection
                       fast_dequantize WITHOUT the global buffer (QLoRA: a new weight and an fp32
                       absmax freed inside; LoRA: the parameter), dX written INTO the saved X
                       (matmul out=X), the weight dropped, a T x r product for the LoRA term.
  LoRA_W               as LoRA_QKV for one projection, except dX = dY @ W.t() is a new tensor.
  LoRA_MLP             forward: e, g (matmul_lora), h (swiglu_fg_kernel, new, dies on return),
                       i (matmul_lora); saves X, e, g and the adapters. backward: six casts;
                       DW = matmul_lora(dY, down^T, ..., the bf16 casts; global buffer) new;
                       swiglu_DWf_DW_dfg_kernel in place (DW -> h, e -> df, g -> de); six grads
                       and their products; up / gate dequantized (not global), dX written into X.
  Fast_RoPE_Embedding_QK  forward: Q.clone() / K.clone() when not contiguous (clone keeps the
                       (b, s, heads, hd) strides), rotated in place; ctx keeps cos, sin and the
                       int32 position ids. backward: the same on dQ / dK.

Once a Function's backward returns (its bf16 adapter casts die with the frame), the autograd
engine casts each bf16 adapter gradient to its fp32 parameter's dtype in output order
(validate_outputs: the bf16 one freed as it is replaced), then releases the saved tensors.
fast_dequantize needs bitsandbytes' nested (double-quant) state. Not ported: Unsloth's own loss
(unsloth_fused_ce_loss; the configs pick memtrace's loss paths), its offloaded "unsloth"
checkpointing (grad_ckpt "full" is plain reentrant torch.utils.checkpoint per layer, what
use_gradient_checkpointing=True runs), the rope path without position ids, DoRA, Gemma."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.utils.checkpoint as ckpt

from memtrace import layers as L
from memtrace.blocks import MLP
from memtrace.tracker import on_chip

FP32 = torch.float32
FAMILIES = ("llama", "mistral", "qwen2", "qwen3")

# utils.py WEIGHT_BUFFERS / ABSMAX_BUFFERS: one pair per device, module-level, created by the
# first fast_dequantize(use_global_buffer=True) and grown with resize_ to the largest weight (and
# absmax) dequantized through them; never freed.
_WEIGHT_BUFFER = [None]
_ABSMAX_BUFFER = [None]


def reset_global_buffers():
    """A fresh process (one model per run): the buffers do not exist yet."""
    _WEIGHT_BUFFER[0] = None
    _ABSMAX_BUFFER[0] = None


def global_buffers():
    return [t for t in (_WEIGHT_BUFFER[0], _ABSMAX_BUFFER[0]) if t is not None]


# -- fast_dequantize ---------------------------------------------------------------------------


class Packed4bit:
    """A Linear4bit's weight as get_lora_parameters hands it to the Functions. bitsandbytes keeps
    it (n/2, 1); callers pass `W.t()` in the backward, and fast_dequantize returns `out.t()` when
    it gets that (1, n/2) view (`is_transposed = W.shape[0] == 1`)."""

    def __init__(self, base, transposed=False):
        self.base, self.transposed = base, transposed

    def t(self):
        return Packed4bit(self.base, not self.transposed)


def fast_dequantize(W, quant_state=None, use_global_buffer=False):
    """kernels/utils.py fast_dequantize (CUDA branch). No quant state: W itself. Otherwise the
    bf16 weight goes into the global buffer (viewed to its shape) or into a new tensor; the fp32
    absmax (one per 64-element block) into the global absmax buffer or a temporary that dies on
    return. The two bitsandbytes kernels (cdequantize_blockwise_fp32, then the NF4 one) write in
    place."""
    if quant_state is None:
        return W
    shape, dtype = quant_state.shape, quant_state.dtype
    n_absmax = quant_state.absmax.numel()
    if use_global_buffer:
        size = shape[0] * shape[1]
        if _WEIGHT_BUFFER[0] is None or _WEIGHT_BUFFER[0].dtype != dtype:
            _WEIGHT_BUFFER[0] = torch.empty(size, dtype=dtype)
            _ABSMAX_BUFFER[0] = torch.empty(n_absmax, dtype=FP32)
        if size > _WEIGHT_BUFFER[0].numel():
            _WEIGHT_BUFFER[0].resize_(size)
        if n_absmax > _ABSMAX_BUFFER[0].numel():
            _ABSMAX_BUFFER[0].resize_(n_absmax)
        out = _WEIGHT_BUFFER[0][:size].view(shape)
        out_absmax = _ABSMAX_BUFFER[0][:n_absmax]
    else:
        out = torch.empty(shape, dtype=dtype)
        out_absmax = torch.empty(n_absmax, dtype=FP32)
    with on_chip():  # the kernels' values (the NF4 codes are not modelled: memtrace.layers)
        out_absmax.fill_(1.0)
        out.fill_(0.01)
    del out_absmax
    return out.t() if W.transposed else out


def get_lora_parameters(proj):
    """utils.py get_lora_parameters: (W, W_quant, A, B, scaling) of a PEFT LoRA module."""
    base = proj.base
    if isinstance(base, L.Linear4bit):
        W, quant = Packed4bit(base), base
    else:
        W, quant = base.weight, None
    return W, quant, proj.lora_A.weight, proj.lora_B.weight, proj.scaling


def matmul_lora(X, W, W_quant, A, B, s):
    """utils.py matmul_lora: X flattened to 2-D, the base product into a new `out` (a 4-bit W
    through the global buffer), then the LoRA term added in place from bf16 casts of A and B."""
    dtype = X.dtype
    shape3 = X.shape[:2] if X.dim() == 3 else None
    if shape3 is not None:
        X = X.view(-1, X.shape[-1])
    W = fast_dequantize(W, W_quant, use_global_buffer=True)
    out = torch.matmul(X, W.t())
    del W
    if A is not None:
        A, B = A.t(), B.t()
        XA = torch.matmul(X, A.to(dtype))  # A's cast lives until the product exists
        out.addmm_(XA, B.to(dtype), alpha=s)
        del XA
    return out.view(*shape3, -1) if shape3 is not None else out


# -- Fast_RMS_Layernorm ------------------------------------------------------------------------


class _FastRMSNorm(torch.autograd.Function):
    """rms_layernorm.py Fast_RMS_Layernorm, gemma=False."""

    @staticmethod
    def forward(ctx, X, W, eps):
        shape = X.shape
        dim = shape[-1]
        X = X.reshape(-1, dim)
        Y = torch.empty(X.shape, dtype=X.dtype)
        r = torch.empty(X.shape[0], dtype=FP32)
        with on_chip():  # _rms_layernorm_forward
            x = X.float()
            inv = torch.rsqrt(x.pow(2).mean(-1) + eps)
            r.copy_(inv)
            Y.copy_((x * inv[:, None]).to(W.dtype) * W)
        ctx.eps = eps
        ctx.save_for_backward(X, W, r)
        return Y.view(*shape)

    @staticmethod
    def backward(ctx, dY):
        shape = dY.shape
        dim = shape[-1]
        dY = dY.reshape(-1, dim)
        X, W, r = ctx.saved_tensors
        dX = dY  # non-Gemma: the kernel writes dX over dY
        with on_chip():  # _rms_layernorm_backward
            inv = r[:, None]
            normed = X.float() * inv
            dyw = dY.float() * W.float()
            rowsum = (dyw * normed).sum(-1, keepdim=True)
            dX.copy_(inv / dim * (dim * dyw - normed * rowsum))
        return dX.view(*shape), None, None


class FastRMSNorm(nn.Module):
    """LlamaRMSNorm's weight, run through fast_rms_layernorm (Unsloth_LlamaRMSNorm)."""

    def __init__(self, dim, eps=1e-6, dtype=torch.bfloat16):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, dtype=dtype))
        self.eps = eps

    def forward(self, x):
        return _FastRMSNorm.apply(x, self.weight, self.eps)


def fast_rms_layernorm(norm, x):
    return norm(x)


# -- Fast_RoPE_Embedding_QK --------------------------------------------------------------------


def _rope_kernel(Q, K, cos, sin, rope_indices, backward):
    """_rope_embedding_QK: each (row, head) rotated in place; cos/sin rows picked by the position
    ids (HAS_ROPE_INDICES) or by row % seq_len; sin negated in the backward pass."""
    with on_chip():
        b, _, s, hd = Q.shape
        half = hd // 2
        idx = (rope_indices.long() if rope_indices is not None
               else torch.arange(s).repeat(b))
        c = cos[idx].float().view(b, 1, s, hd)[..., :half]
        sn = sin[idx].float().view(b, 1, s, hd)[..., :half]
        if backward:
            sn = -sn
        for t in (Q, K):
            x0, x1 = t[..., :half].float(), t[..., half:].float()
            r0, r1 = x0 * c - x1 * sn, x1 * c + x0 * sn
            t[..., :half].copy_(r0)
            t[..., half:].copy_(r1)


class _FastRoPEQK(torch.autograd.Function):
    """rope_embedding.py Fast_RoPE_Embedding_QK."""

    @staticmethod
    def forward(ctx, Q, K, cos, sin, rope_indices):
        cos, sin = cos.squeeze(), sin.squeeze()
        # "Inplace rotary embedding": a clone only for a non-contiguous input; clone keeps the
        # strides of a dense input, so Q_out stays laid out (b, s, heads, hd).
        Q_out = Q.clone() if not Q.is_contiguous() else Q
        K_out = K.clone() if not K.is_contiguous() else K
        rope_ptr = (rope_indices.reshape(-1).to(dtype=torch.int32)
                    if rope_indices is not None else None)
        _rope_kernel(Q_out, K_out, cos, sin, rope_ptr, backward=False)
        ctx.cos, ctx.sin, ctx.rope_indices = cos, sin, rope_ptr
        return Q_out, K_out

    @staticmethod
    def backward(ctx, dQ, dK):
        dQ_out = dQ.clone() if not dQ.is_contiguous() else dQ
        dK_out = dK.clone() if not dK.is_contiguous() else dK
        _rope_kernel(dQ_out, dK_out, ctx.cos, ctx.sin, ctx.rope_indices, backward=True)
        return dQ_out, dK_out, None, None, None


def fast_rope_embedding(Q, K, cos, sin, rope_indices):
    """rope_embedding.py fast_rope_embedding with position ids (the SFT collator's): the QK
    Function. (Without them Unsloth runs Fast_RoPE_Embedding on Q.transpose(1, 2).contiguous(),
    in place on the projection's output; not ported.)"""
    return _FastRoPEQK.apply(Q, K, cos, sin, rope_indices)


def rope_rows(c):
    """The cache's rows: min(32768, max_position_embeddings) from __init__, or, when
    max_position_embeddings (LlamaModel_fast_forward) or the sequence (the attention) needs more,
    extend_rope_embedding's next multiple of 8192."""
    P = c.get("max_position", c["seq"])
    rows = min(4 * 8192, P)
    need = max(P, c["seq"])
    return ((need // 8192) + (need % 8192 != 0)) * 8192 if need > rows else rows


class RopeCache:
    """LlamaRotaryEmbedding (llama.py) as LlamaModel_fast_forward uses it: one cos/sin cache for
    the model, shared by every attention, built at init with min(32768, max_position_embeddings)
    rows in the default dtype (the model dtype: transformers builds the model under it), grown in
    the first forward to the next multiple of 8192 when max_position_embeddings (or a longer
    sequence) needs more, in the hidden dtype; the whole cache goes to every rope call. Config key
    `max_position` (config.max_position_embeddings) defaults to `seq`, as the learned positions of
    the HF ports do."""

    def __init__(self, c, dtype, base=10000.0):
        hd = c["head_dim"]
        self.rows = rows = rope_rows(c)
        inv = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
        freqs = torch.outer(torch.arange(rows, dtype=torch.int64).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos = emb.cos().to(dtype)
        self.sin = emb.sin().to(dtype)

    def tensors(self):
        return [self.cos, self.sin]


# -- the fused LoRA Functions ------------------------------------------------------------------


class LoRA_MLP(torch.autograd.Function):
    """fast_lora.py LoRA_MLP with the SwiGLU kernels (apply_lora_mlp_swiglu, inplace=True)."""

    @staticmethod
    def forward(ctx, X, gateW, gateW_quant, gateA, gateB, gateS, upW, upW_quant, upA, upB, upS,
                downW, downW_quant, downA, downB, downS):
        e = matmul_lora(X, gateW, gateW_quant, gateA, gateB, gateS)
        g = matmul_lora(X, upW, upW_quant, upA, upB, upS)
        h = swiglu_fg_kernel(e, g)
        i = matmul_lora(h, downW, downW_quant, downA, downB, downS)
        ctx.custom_saved = (gateW, gateW_quant, gateS, upW, upW_quant, upS, downW, downW_quant,
                            downS)
        ctx.save_for_backward(gateA, gateB, upA, upB, downA, downB, X, e, g)
        return i

    @staticmethod
    def backward(ctx, dY):
        gateW, gateW_quant, gateS, upW, upW_quant, upS, downW, downW_quant, downS = \
            ctx.custom_saved
        gateA, gateB, upA, upB, downA, downB, X, e, g = ctx.saved_tensors
        batch, seq_len, hd = X.shape
        dY = dY.view(-1, dY.shape[-1])
        X = X.view(-1, X.shape[-1])
        e = e.view(-1, e.shape[-1])
        g = g.view(-1, g.shape[-1])
        dtype = X.dtype
        # Six bf16 copies of the fp32 adapters, held (transposed) to the end of the backward.
        gateA, gateB, upA, upB, downA, downB = (gateA.to(dtype), gateB.to(dtype), upA.to(dtype),
                                                upB.to(dtype), downA.to(dtype), downB.to(dtype))
        gateA, gateB, upA, upB, downA, downB = (gateA.t(), gateB.t(), upA.t(), upB.t(), downA.t(),
                                                downB.t())
        DW = matmul_lora(dY, downW.t(), downW_quant, downB, downA, downS)
        DW, e, g = swiglu_DWf_DW_dfg_kernel(DW, e, g)
        h, df, de = DW, e, g
        d_downA = torch.empty_like(downA)
        d_downB = torch.empty_like(downB)
        d_gateA = torch.empty_like(gateA)
        d_gateB = torch.empty_like(gateB)
        d_upA = torch.empty_like(upA)
        d_upB = torch.empty_like(upB)
        d_downA.addmm_(h.t(), dY @ downB.t(), alpha=downS, beta=0)
        d_downB.addmm_(downA.t() @ h.t(), dY, alpha=downS, beta=0)
        d_upA.addmm_(X.t(), df @ upB.t(), alpha=upS, beta=0)
        d_upB.addmm_(upA.t() @ X.t(), df, alpha=upS, beta=0)
        d_gateA.addmm_(X.t(), de @ gateB.t(), alpha=gateS, beta=0)
        d_gateB.addmm_(gateA.t() @ X.t(), de, alpha=gateS, beta=0)
        upW = fast_dequantize(upW.t(), upW_quant)
        dX = torch.matmul(df, upW.t(), out=X)  # inplace: over the saved X
        del upW
        dX.addmm_(df @ upB.t(), upA.t(), alpha=upS)
        gateW = fast_dequantize(gateW.t(), gateW_quant)
        dX.addmm_(de, gateW.t())
        del gateW
        dX.addmm_(de @ gateB.t(), gateA.t(), alpha=gateS)
        return (dX.view(batch, seq_len, hd), None, None, d_gateA.t(), d_gateB.t(), None,
                None, None, d_upA.t(), d_upB.t(), None,
                None, None, d_downA.t(), d_downB.t(), None)


def swiglu_fg_kernel(e, g):
    """swiglu.py swiglu_fg_kernel: h new, f = silu(e) in fp32 cast to g's dtype, h = f * g."""
    batch, seq_len, hd = e.shape
    h = torch.empty((batch, seq_len, hd), dtype=e.dtype)
    with on_chip():
        ef = e.float()
        h.copy_((ef * torch.sigmoid(ef)).to(g.dtype) * g)
    return h


def swiglu_DWf_DW_dfg_kernel(DW, e, g):
    """swiglu.py swiglu_DWf_DW_dfg_kernel: in place, DW <- h = f * g, e <- df = DW * f,
    g <- de = (DW * g) * se * (1 + e * (1 - se))."""
    with on_chip():
        ef = e.float()
        se = torch.sigmoid(ef)
        f = (se * ef).to(DW.dtype)
        h = f * g
        df = DW * f
        dg = DW * g
        de = (dg.float() * se * (1.0 + ef * (1.0 - se))).to(DW.dtype)
        DW.copy_(h)
        e.copy_(df)
        g.copy_(de)
    return DW, e, g


class LoRA_QKV(torch.autograd.Function):
    """fast_lora.py LoRA_QKV (apply_lora_qkv, inplace=True)."""

    @staticmethod
    def forward(ctx, X, QW, QW_quant, QA, QB, QS, KW, KW_quant, KA, KB, KS, VW, VW_quant, VA, VB,
                VS):
        b, s = X.shape[:2]
        X2 = X.view(-1, X.shape[-1])
        Q = matmul_lora(X2, QW, QW_quant, QA, QB, QS).view(b, s, -1)
        K = matmul_lora(X2, KW, KW_quant, KA, KB, KS).view(b, s, -1)
        V = matmul_lora(X2, VW, VW_quant, VA, VB, VS).view(b, s, -1)
        ctx.custom_saved = (QW, QW_quant, QS, KW, KW_quant, KS, VW, VW_quant, VS)
        ctx.save_for_backward(X, QA, QB, KA, KB, VA, VB)
        return Q, K, V

    @staticmethod
    def backward(ctx, dQ, dK, dV):
        QW, QW_quant, QS, KW, KW_quant, KS, VW, VW_quant, VS = ctx.custom_saved
        X, QA, QB, KA, KB, VA, VB = ctx.saved_tensors
        batch, seq_len, hd = X.shape
        dQ = dQ.view(-1, dQ.shape[-1])
        dK = dK.reshape(-1, dK.shape[-1])
        dV = dV.view(-1, dV.shape[-1])
        X = X.view(-1, X.shape[-1])
        dtype = X.dtype
        QA, QB, KA, KB, VA, VB = (QA.to(dtype), QB.to(dtype), KA.to(dtype), KB.to(dtype),
                                  VA.to(dtype), VB.to(dtype))
        QA, QB, KA, KB, VA, VB = QA.t(), QB.t(), KA.t(), KB.t(), VA.t(), VB.t()
        d_QA = torch.empty_like(QA)
        d_QB = torch.empty_like(QB)
        d_KA = torch.empty_like(KA)
        d_KB = torch.empty_like(KB)
        d_VA = torch.empty_like(VA)
        d_VB = torch.empty_like(VB)
        d_QA.addmm_(X.t(), dQ @ QB.t(), alpha=QS, beta=0)
        d_QB.addmm_(QA.t() @ X.t(), dQ, alpha=QS, beta=0)
        d_KA.addmm_(X.t(), dK @ KB.t(), alpha=KS, beta=0)
        d_KB.addmm_(KA.t() @ X.t(), dK, alpha=KS, beta=0)
        d_VA.addmm_(X.t(), dV @ VB.t(), alpha=VS, beta=0)
        d_VB.addmm_(VA.t() @ X.t(), dV, alpha=VS, beta=0)
        QW = fast_dequantize(QW.t(), QW_quant)
        dX = torch.matmul(dQ, QW.t(), out=X)  # inplace: over the saved X
        del QW
        dX.addmm_(dQ @ QB.t(), QA.t(), alpha=QS)
        KW = fast_dequantize(KW.t(), KW_quant)
        dX.addmm_(dK, KW.t())
        del KW
        dX.addmm_(dK @ KB.t(), KA.t(), alpha=KS)
        VW = fast_dequantize(VW.t(), VW_quant)
        dX.addmm_(dV, VW.t())
        del VW
        dX.addmm_(dV @ VB.t(), VA.t(), alpha=VS)
        return (dX.view(batch, seq_len, hd), None, None, d_QA.t(), d_QB.t(), None,
                None, None, d_KA.t(), d_KB.t(), None,
                None, None, d_VA.t(), d_VB.t(), None)


class LoRA_W(torch.autograd.Function):
    """fast_lora.py LoRA_W (apply_lora_o)."""

    @staticmethod
    def forward(ctx, X, W, W_quant, A, B, S):
        XW = matmul_lora(X, W, W_quant, A, B, S)
        ctx.custom_saved = (W, W_quant, S)
        ctx.save_for_backward(A, B, X)
        return XW

    @staticmethod
    def backward(ctx, dY):
        W, W_quant, S = ctx.custom_saved
        A, B, X = ctx.saved_tensors
        batch, seq_len, hd = X.shape
        dY = dY.reshape(-1, dY.shape[-1])
        X = X.reshape(-1, X.shape[-1])
        dtype = X.dtype
        A, B = A.to(dtype), B.to(dtype)
        A, B = A.t(), B.t()
        d_A = torch.empty_like(A)
        d_B = torch.empty_like(B)
        d_A.addmm_(X.t(), dY @ B.t(), alpha=S, beta=0)
        d_B.addmm_(A.t() @ X.t(), dY, alpha=S, beta=0)
        W = fast_dequantize(W.t(), W_quant)
        dX = dY @ W.t()  # a new tensor (no out=)
        del W
        dX.addmm_(dY @ B.t(), A.t(), alpha=S)
        return dX.view(batch, seq_len, hd), None, None, d_A.t(), d_B.t(), None


def apply_lora_qkv(attn, X):
    return LoRA_QKV.apply(X, *get_lora_parameters(attn.q_proj), *get_lora_parameters(attn.k_proj),
                          *get_lora_parameters(attn.v_proj))


def apply_lora_o(attn, X):
    return LoRA_W.apply(X, *get_lora_parameters(attn.o_proj))


def apply_lora_mlp_swiglu(mlp, X):
    return LoRA_MLP.apply(X, *get_lora_parameters(mlp.gate_proj),
                          *get_lora_parameters(mlp.up_proj), *get_lora_parameters(mlp.down_proj))


def patched(*projs):
    """FastLlamaModel.patch_peft_model's test for a group (lora_dropout == 0 checked by the
    caller): every module has LoRA and its base no bias (DoRA is not modelled)."""
    return all(isinstance(p, L.LoraLinear) and getattr(p.base, "bias", None) is None
               for p in projs)


# -- the layer ---------------------------------------------------------------------------------


class UnslothAttention(nn.Module):
    """LlamaAttention_fast_forward / Qwen3Attention_fast_forward, training, flash-dense or xformers
    backend.
    Unpatched groups run PEFT's modules (original_apply_qkv / original_apply_o)."""

    def __init__(self, c, spec, make_linear, dtype):
        super().__init__()
        h, hd = c["hidden"], c["head_dim"]
        self.nh, self.nkv, self.hd = c["heads"], c["kv_heads"], hd
        bias = spec.get("qkv_bias", False)
        self.q_proj = make_linear("q_proj", h, self.nh * hd, bias)
        self.k_proj = make_linear("k_proj", h, self.nkv * hd, bias)
        self.v_proj = make_linear("v_proj", h, self.nkv * hd, bias)
        self.o_proj = make_linear("o_proj", self.nh * hd, h, False)
        self.qk_norm = spec.get("qk_norm", False)
        if self.qk_norm:
            self.q_norm = FastRMSNorm(hd, dtype=dtype)
            self.k_norm = FastRMSNorm(hd, dtype=dtype)
        p0 = c.get("lora_dropout", 0.0) == 0
        self.fused_qkv = p0 and patched(self.q_proj, self.k_proj, self.v_proj)
        self.fused_o = p0 and patched(self.o_proj)
        self.xformers = c.get("attn", "flash") == "xformers"

    def forward(self, x, position_ids, cos, sin):
        b, s, _ = x.shape
        if self.fused_qkv:
            Q, K, V = apply_lora_qkv(self, x)
        else:
            Q, K, V = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.qk_norm:  # qwen3.py: normalized on (b, s, heads, hd), then transposed
            Q = Q.view(b, s, self.nh, self.hd)
            K = K.view(b, s, self.nkv, self.hd)
            V = V.view(b, s, self.nkv, self.hd).transpose(1, 2)
            Q = fast_rms_layernorm(self.q_norm, Q)
            K = fast_rms_layernorm(self.k_norm, K)
            Q, K = Q.transpose(1, 2), K.transpose(1, 2)
        else:
            Q = Q.view(b, s, self.nh, self.hd).transpose(1, 2)
            K = K.view(b, s, self.nkv, self.hd).transpose(1, 2)
            V = V.view(b, s, self.nkv, self.hd).transpose(1, 2)
        Q, K = fast_rope_embedding(Q, K, cos, sin, position_ids)
        if self.xformers and self.nkv != self.nh:
            # run_attention XFORMERS with a backward to come: K and V transposed to
            # (b, s, kv heads, hd), viewed with a group axis, expanded to the query heads and
            # reshaped (a copy each); memory_efficient_attention keeps what flash keeps.
            g = self.nh // self.nkv
            K, V = (t.transpose(1, 2).view(b, s, self.nkv, 1, self.hd)
                    .expand(b, s, self.nkv, g, self.hd).reshape(b, s, self.nh, self.hd)
                    .transpose(1, 2) for t in (K, V))
        # run_attention FLASH_DENSE: flash_attn_func(Q.transpose(1, 2), ...) takes and returns
        # (b, s, heads, hd) without copies (every last stride is 1); memtrace's flash port takes
        # the (b, heads, s, hd) views of the same storages and keeps what flash-attn keeps.
        A = L.flash_attention(Q, K, V).transpose(1, 2).reshape(b, s, self.nh, self.hd)
        attn_output = A.reshape(b, s, self.nh * self.hd)
        if self.fused_o:
            return apply_lora_o(self, attn_output)
        return self.o_proj(attn_output)


class UnslothLayer(nn.Module):
    """LlamaDecoderLayer_fast_forward (training branch): the residual adds are new tensors; the
    MLP is LoRA_MLP when patched, else transformers' LlamaMLP over PEFT's modules
    (memtrace.blocks.MLP)."""

    def __init__(self, c, spec, make_linear, dtype):
        super().__init__()
        self.self_attn = UnslothAttention(c, spec, make_linear, dtype)
        self.mlp = MLP(c, spec, make_linear)
        self.fused_mlp = (c.get("lora_dropout", 0.0) == 0 and
                          patched(self.mlp.gate_proj, self.mlp.up_proj, self.mlp.down_proj))
        self.input_layernorm = FastRMSNorm(c["hidden"], dtype=dtype)
        self.post_attention_layernorm = FastRMSNorm(c["hidden"], dtype=dtype)

    def forward(self, x, position_ids, cos, sin):
        residual = x
        hs = fast_rms_layernorm(self.input_layernorm, x)
        hs = self.self_attn(hs, position_ids, cos, sin)
        hs = residual + hs
        residual = hs
        hs = fast_rms_layernorm(self.post_attention_layernorm, hs)
        hs = apply_lora_mlp_swiglu(self.mlp, hs) if self.fused_mlp else self.mlp(hs)
        return residual + hs


def check_config(c):
    if c["family"] not in FAMILIES:
        raise ValueError(f"unsloth_layer: family {c['family']} is not one of {FAMILIES}")
    if c["method"] not in ("lora", "qlora"):
        raise ValueError("unsloth_layer: method must be lora or qlora")
    if c["method"] == "qlora" and not c.get("double_quant", True):
        raise ValueError("unsloth_layer: fast_dequantize reads the nested (double-quant) state")
    if c.get("attn", "flash") not in ("flash", "xformers"):
        raise ValueError("unsloth_layer: attn must be flash (the flash-dense backend) or xformers")
    if c.get("grad_ckpt", "none") not in ("none", "full"):
        raise ValueError("unsloth_layer: grad_ckpt must be none or full")
    if c.get("kbit_prep"):
        raise ValueError("unsloth_layer: Unsloth prepares the model itself (no kbit_prep)")


def model_forward(m, ids, position_ids):
    """LlamaModel_fast_forward, training: the embedding output made to require grad
    (prepare_model_for_training runs enable_input_require_grads with use_reentrant=True, whether
    or not checkpointing is on), position_ids viewed and cast to a new int32 tensor (kept by
    every layer's rope ctx), the shared RoPE cache, the layers (torch.utils.checkpoint per layer,
    reentrant, with grad_ckpt "full"), the final fast_rms_layernorm."""
    c = m.c
    b, s = ids.shape
    x = m.embed_tokens(ids)
    x.requires_grad_(True)
    if position_ids is not None:
        position_ids = position_ids.view(-1, s).to(torch.int32)
    cos, sin = m.rope.cos, m.rope.sin
    for layer in m.layers:
        if c["grad_ckpt"] == "none":
            x = layer(x, position_ids, cos, sin)
        else:
            x = ckpt.checkpoint(layer, x, position_ids, cos, sin, use_reentrant=True,
                                preserve_rng_state=False)
    return fast_rms_layernorm(m.norm, x)

"""A causal LM from the ported blocks, LoRA/QLoRA wrapping as PEFT does it, and the loss paths."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as ckpt

from memtrace import layers as L
from memtrace.blocks import DecoderLayer, make_norm

# Structure of each family as its transformers modeling file builds it.
FAMILIES = {
    "llama": dict(norm="rms", residual="sequential", mlp="gated", act="silu"),
    "mistral": dict(norm="rms", residual="sequential", mlp="gated", act="silu"),
    "qwen2": dict(norm="rms", residual="sequential", mlp="gated", act="silu", qkv_bias=True),
    # Baichuan-2 (remote code, modeling_baichuan.py): the Llama layer; NormHead normalizes the
    # head weight every training forward.
    "baichuan": dict(norm="rms", residual="sequential", mlp="gated", act="silu", norm_head=True),
    "qwen3": dict(norm="rms", residual="sequential", mlp="gated", act="silu", qk_norm=True),
    "phi3": dict(norm="rms", residual="sequential", mlp="gated", act="silu", fused_qkv="qkv_proj",
                 fused_gate_up=True),
    "gemma": dict(norm="gemma_rms", residual="sequential", mlp="gated", act="gelu_tanh",
                  embed_scale=True),
    "gemma2": dict(norm="gemma_rms", residual="sequential", mlp="gated", act="gelu_tanh",
                   embed_scale=True, post_norms=True, attn_softcap=50.0, final_softcap=30.0),
    "gemma3": dict(norm="gemma_rms", residual="sequential", mlp="gated", act="gelu_tanh",
                   embed_scale=True, post_norms=True, qk_norm=True),
    "phi": dict(norm="layer", residual="parallel_shared_norm", mlp="plain", act="gelu_tanh",
                qkv_bias=True, o_bias=True, o_name="dense", mlp_bias=True, partial_rotary=0.5,
                lm_head_bias=True),
    "gpt_neox": dict(norm="layer", residual="parallel", mlp="plain", act="gelu", qkv_bias=True,
                     fused_qkv="query_key_value", o_bias=True, o_name="dense", mlp_bias=True,
                     plain_names=("dense_h_to_4h", "dense_4h_to_h"), partial_rotary=0.25),
    "gpt2": dict(norm="layer", residual="sequential", mlp="plain", act="gelu_tanh", qkv_bias=True,
                 fused_qkv="c_attn", o_bias=True, o_name="c_proj", mlp_bias=True,
                 plain_names=("c_fc", "c_proj"), rotary=False, learned_positions=True,
                 attn_dropout=0.1, resid_dropout=0.1, embd_dropout=0.1),
}


class CausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        spec = dict(FAMILIES[c["family"]])
        if c.get("dropout_off"):
            for k in ("attn_dropout", "resid_dropout", "embd_dropout"):
                spec.pop(k, None)
        self.c, self.spec = c, spec
        dtype = torch.float32 if c.get("precision") == "fp32" else torch.bfloat16
        self.dtype = dtype
        method = c["method"]
        targets = set(c.get("lora_targets", []))

        def make_linear(name, d_in, d_out, bias):
            if method == "qlora":
                base = L.Linear4bit(d_in, d_out, dtype, c.get("double_quant", True),
                                    c.get("bnb_saves_input", False))
                if bias:
                    base.bias = nn.Parameter(torch.zeros(d_out, dtype=dtype), requires_grad=False)
                    inner = base.forward
                    base.forward = lambda x, inner=inner, b=base.bias: inner(x) + b
            else:
                base = nn.Linear(d_in, d_out, bias=bias, dtype=dtype)
            if method in ("lora", "qlora") and name in targets:
                adtype = torch.float32 if c.get("adapter_dtype", "fp32") == "fp32" else dtype
                return L.LoraLinear(base, d_in, d_out, c["lora_rank"], 2 * c["lora_rank"],
                                    c.get("lora_dropout", 0.0), adtype)
            return base

        if True:
            self.embed = nn.Embedding(c["vocab"], c["hidden"], dtype=dtype)
            if spec.get("learned_positions"):
                self.wpe = nn.Embedding(c["seq"], c["hidden"], dtype=dtype)
            self.layers = nn.ModuleList(DecoderLayer(c, spec, make_linear) for _ in range(c["layers"]))
            self.norm = make_norm(spec, c["hidden"])
            self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=spec.get("lm_head_bias", False),
                                     dtype=dtype)
        if c.get("tied"):
            self.lm_head.weight = self.embed.weight
        if method in ("lora", "qlora"):
            for n, p in self.named_parameters():
                if "lora_" not in n:
                    p.requires_grad_(False)
            if method == "qlora" and c.get("kbit_prep"):
                # peft prepare_model_for_kbit_training: non-quantized params upcast to fp32.
                for n, p in self.named_parameters():
                    if "lora_" not in n and p.dtype in (torch.bfloat16, torch.float16):
                        p.data = p.data.float()

    def hidden(self, ids):
        c, spec = self.c, self.spec
        b, s = ids.shape
        x = self.embed(ids)
        if c["grad_ckpt"] != "none" and not x.requires_grad:
            x.requires_grad_(True)  # PreTrainedModel.enable_input_require_grads (forward hook)
        if spec.get("embed_scale"):
            # GemmaModel: hidden * normalizer, a 0-dim tensor in the hidden dtype.
            x = x * torch.tensor(c["hidden"] ** 0.5, dtype=x.dtype)
        if spec.get("learned_positions"):
            x = x + self.wpe(torch.arange(s)[None])
            x = L.dropout(x, spec.get("embd_dropout", 0.0))
        cos = sin = None
        if spec.get("rotary", True):
            rot = int(c["head_dim"] * spec.get("partial_rotary", 1.0))
            cos, sin = L.rotary_cos_sin(b, s, rot, x.dtype)
        mask = L.causal_mask(s, x.dtype).expand(b, 1, s, s).contiguous() if c["attn"] == "eager" else None
        for layer in self.layers:
            if c["grad_ckpt"] == "none":
                x = layer(x, cos, sin, mask)
            else:
                # transformers GradientCheckpointingLayer / _gradient_checkpointing_func:
                # torch.utils.checkpoint per decoder layer, use_reentrant=True by default.
                x = ckpt.checkpoint(layer, x, cos, sin, mask,
                                    use_reentrant=c["grad_ckpt"] != "nonreentrant")
        return self.norm(x)


def head(model, h):
    if model.spec.get("norm_head"):  # Baichuan-2 NormHead.forward (training)
        return F.linear(h, F.normalize(model.lm_head.weight))
    return model.lm_head(h)


def hf_loss(model, h, labels):
    """LlamaForCausalLM.forward + ForCausalLMLoss (transformers 4.46+): bf16 logits, upcast to
    fp32, labels padded and shifted, cross-entropy (log_softmax saved, fp32)."""
    logits = head(model, h)
    cap = model.spec.get("final_softcap")
    if cap is not None:  # Gemma2ForCausalLM
        logits = logits / cap
        logits = torch.tanh(logits)
        logits = logits * cap
    logits = logits.float()
    labels = F.pad(labels, (0, 1), value=-100)
    shift = labels[..., 1:].contiguous()
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), shift.view(-1), ignore_index=-100,
                           reduction="sum") / (shift != -100).sum()
    return loss


def chunked_loss(model, h, labels, chunk=128):
    """LitGPT GPT.forward(lm_head_chunk_size=128) + chunked_cross_entropy: logits as a list of
    128-token chunks (model dtype), cross-entropy per chunk in that dtype."""
    chunks = [model.lm_head(x) for x in h.split(chunk, dim=1)]
    labels = labels[..., 1:]
    labels = F.pad(labels, (0, 1), value=-100)
    tchunks = labels.split(chunk, dim=1)
    losses = [F.cross_entropy(lc.reshape(-1, lc.shape[-1]), tc.reshape(-1), ignore_index=-100,
                              reduction="none") for lc, tc in zip(chunks, tchunks)]
    del chunks
    n = (labels != -100).sum()
    return torch.cat(losses).sum() / n


def chunked_output_loss(model, h, labels, chunks=8):
    """torchtune 0.6.1: TransformerDecoder.chunked_output (the head on each tensor_split chunk of
    the sequence, model dtype) + CEWithChunkedOutputLoss.forward (labels shifted with hstack,
    each chunk's F.cross_entropy(logits.float(), labels, reduction="sum") in turn); the recipe's
    `del logits` drops the model-dtype chunks before backward."""
    logits = [head(model, x) for x in h.tensor_split(chunks, dim=1)]
    labels = torch.hstack((labels[..., 1:], torch.full_like(labels[..., :1], -100)))
    total = (labels != -100).sum()
    labels = [t.reshape(-1) for t in labels.tensor_split(chunks, dim=1)]
    flat = [c.reshape(-1, c.size(-1)) for c in logits]
    loss = 0.0
    for lc, tc in zip(flat, labels):
        loss = loss + F.cross_entropy(lc.float(), tc, ignore_index=-100, reduction="sum")
    del logits, flat
    return loss / total


class _FusedLinearCE(torch.autograd.Function):
    """Liger LigerFusedLinearCrossEntropyFunction (ops/fused_linear_cross_entropy.py): logits are
    computed per chunk of tokens, the gradient of the input (and of the head weight when trainable)
    is computed in the forward; only grad_input (b*s*h, model dtype) and grad_weight are kept."""

    @staticmethod
    def forward(ctx, x, w, labels):
        bt, h = x.shape
        v = w.shape[0]
        # chunk_size = next_power_of_2(ceil(BT / ceil(V / H))) (Liger)
        inc = math.ceil(v / h)
        chunk = 1 << max(0, math.ceil(math.log2(max(1, math.ceil(bt / inc)))))
        grad_x = torch.zeros_like(x)
        grad_w = torch.zeros_like(w) if w.requires_grad else None
        n = (labels != -100).sum()
        loss = torch.zeros((), dtype=torch.float32)
        for i in range(0, bt, chunk):
            xc = x[i : i + chunk]
            lc = (xc @ w.t()).float()
            tc = labels[i : i + chunk]
            lse = torch.logsumexp(lc, -1)
            valid = tc != -100
            tgt = lc.gather(1, tc.clamp(min=0)[:, None])[:, 0]
            loss += ((lse - tgt) * valid).sum()
            g = torch.softmax(lc, -1)
            g[torch.arange(g.shape[0]), tc.clamp(min=0)] -= 1
            g = (g * valid[:, None] / n).to(x.dtype)
            grad_x[i : i + chunk] = g @ w
            if grad_w is not None:
                grad_w += g.t() @ xc
            del lc, g
        ctx.save_for_backward(grad_x, grad_w)
        return loss / n

    @staticmethod
    def backward(ctx, g):
        grad_x, grad_w = ctx.saved_tensors
        if g.item() != 1.0:  # Liger scales in place only when the incoming gradient is not 1
            grad_x.mul_(g)
            if grad_w is not None:
                grad_w.mul_(g)
        return grad_x, grad_w, None


def fused_loss(model, h, labels):
    labels = F.pad(labels, (0, 1), value=-100)[..., 1:].contiguous()
    b, s, d = h.shape
    return _FusedLinearCE.apply(h.reshape(b * s, d), model.lm_head.weight, labels.reshape(-1))


LOSSES = {"hf": hf_loss, "chunked": chunked_loss, "fused": fused_loss,
          "chunked_output": chunked_output_loss}

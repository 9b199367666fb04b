"""A causal LM from the ported blocks, LoRA/QLoRA wrapping as PEFT does it, and the loss paths."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as ckpt

from memtrace import layers as L
from memtrace import megatron as MG
from memtrace import unsloth as U
from memtrace.blocks import DecoderLayer, make_norm
from memtrace.tracker import on_chip

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


class _TiedUse(torch.autograd.Function):
    """One use of a weight shared by several autograd nodes (the tied embedding and head), with
    the gradient accumulation of torch >= 2.0's engine: InputBuffer::accumulate
    (torch/csrc/autograd/input_buffer.cpp, `can_accumulate_inplace`) adds a later gradient into
    the one already buffered with `old_var.add_(var)` when grad mode is off and the buffered
    gradient is a dense tensor nobody else references, so the two gradients of a tied weight are
    both alive only until the second one has been added in. torch 1.13 (the tracer's engine)
    still accumulated out of place, `old_var + var`: a third weight-sized tensor. Each use
    returns an alias of the weight; its backward parks the first gradient (as the engine's
    buffer would), adds the later ones into it in place, and hands the sum to AccumulateGrad
    with the last use."""

    @staticmethod
    def forward(ctx, w, tie):
        ctx.tie = tie
        return w.view_as(w)

    @staticmethod
    def backward(ctx, g):
        tie = ctx.tie
        tie.pending_uses -= 1
        if tie.buffered is None:
            tie.buffered = g
        elif tie.buffered.is_contiguous():
            tie.buffered.add_(g)
        else:
            tie.buffered = tie.buffered + g
        if tie.pending_uses > 0:
            return None, None
        out, tie.buffered = tie.buffered, None
        return out, None


class TiedWeight:
    """The weight the embedding and the head share (tie_word_embeddings): every use goes through
    _TiedUse while it trains; a frozen one is used as is."""

    def __init__(self, weight):
        self.weight = weight
        self.pending_uses = 0
        self.buffered = None

    def use(self):
        if not self.weight.requires_grad:
            return self.weight
        self.pending_uses += 1
        return _TiedUse.apply(self.weight, self)


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

        self.rope = None
        if c.get("unsloth_layer"):
            # Unsloth's FastLlamaModel / FastQwen2Model / FastQwen3Model (memtrace.unsloth): its
            # decoder layer, fused LoRA Functions where patch_peft_model fuses, fast RMSNorm
            # (the final norm too), one shared RoPE cache; embeddings and head as transformers'.
            U.check_config(c)
            U.reset_global_buffers()
            self.embed = nn.Embedding(c["vocab"], c["hidden"], dtype=dtype)
            self.layers = nn.ModuleList(U.UnslothLayer(c, spec, make_linear, dtype)
                                        for _ in range(c["layers"]))
            self.norm = U.FastRMSNorm(c["hidden"], dtype=dtype)
            self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False, dtype=dtype)
            self.rope = U.RopeCache(c, dtype)
        elif c.get("megatron_layer"):
            # NeMo 2 / Megatron-Core GPTModel with the TE layer spec (memtrace.megatron).
            spec["megatron_fusions"] = c["family"] == "llama"  # NeMo LlamaConfig's fusions

            def make_te(name, d_in, d_out, bias, norm=False):
                base = (MG.TELayerNormLinear(d_in, d_out, bias, dtype) if norm
                        else nn.Linear(d_in, d_out, bias=bias, dtype=dtype))
                if method == "lora" and name in targets:
                    return MG.LoRALinear(base, MG.Adapter(d_in, d_out, c["lora_rank"],
                                                          2 * c["lora_rank"], dtype))
                return base

            self.embed = nn.Embedding(c["vocab"], c["hidden"], dtype=dtype)
            self.layers = nn.ModuleList(MG.MegatronLayer(c, spec, make_te, dtype)
                                        for _ in range(c["layers"]))
            self.norm = MG.TENorm(c["hidden"], dtype)
            self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False, dtype=dtype)
        else:
            self.embed = nn.Embedding(c["vocab"], c["hidden"], dtype=dtype)
            if spec.get("learned_positions"):
                self.wpe = nn.Embedding(c["seq"], c["hidden"], dtype=dtype)
            self.layers = nn.ModuleList(DecoderLayer(c, spec, make_linear) for _ in range(c["layers"]))
            self.norm = make_norm(spec, c["hidden"])
            self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=spec.get("lm_head_bias", False),
                                     dtype=dtype)
        self.tie = None
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
        if c.get("tied"):
            self.tie = TiedWeight(self.embed.weight)

    def head_weight(self):
        """lm_head's weight for one use (through the tie when the embedding shares it)."""
        return self.tie.use() if self.tie else self.lm_head.weight

    def embed_tokens(self, ids):
        if self.tie is None:
            return self.embed(ids)
        return F.embedding(ids, self.tie.use())

    def persistent_buffers(self):
        """Tensors a run keeps outside the parameters (measured as `buffers`): Unsloth's RoPE
        cache and fast_dequantize's global buffers (these exist once a step has run)."""
        if self.rope is None:
            return []
        return self.rope.tensors() + U.global_buffers()

    def hidden(self, ids, position_ids=None):
        c, spec = self.c, self.spec
        if c.get("unsloth_layer"):
            return U.model_forward(self, ids, position_ids)
        b, s = ids.shape
        x = self.embed_tokens(ids)
        if c.get("megatron_layer"):
            freqs = MG.rotary_freqs(s, c["head_dim"])
            for layer in self.layers:
                x = layer(x, freqs)
            return self.norm(x)
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
        return F.linear(h, F.normalize(model.head_weight()))
    return F.linear(h, model.head_weight(), model.lm_head.bias)


def capped_logits(model, h):
    """The head's logits, soft-capped where the model caps them (Gemma2ForCausalLM's
    final_logit_softcapping: divide, tanh, multiply, each step rebinding `logits`, so only the
    last lives on once it exists)."""
    logits = head(model, h)
    cap = model.spec.get("final_softcap")
    if cap is not None:
        logits = logits / cap
        logits = torch.tanh(logits)
        logits = logits * cap
    return logits


def for_causal_lm_loss(logits, labels, vocab):
    """transformers loss/loss_utils.py ForCausalLMLoss as of 4.49 (PR #35646 dropped 4.46-4.48's
    `shift_logits = logits[..., :-1, :].contiguous()` copy; the same code through 4.5x): an fp32
    copy of the logits in this scope, the labels padded and shifted, cross-entropy (log_softmax
    saves its fp32 output; nll_loss the shifted target), the sum over Trainer's
    num_items_in_batch."""
    logits = logits.float()
    labels = F.pad(labels, (0, 1), value=-100)
    shift_labels = labels[..., 1:].contiguous()
    logits = logits.view(-1, vocab)
    shift_labels = shift_labels.view(-1)
    return F.cross_entropy(logits, shift_labels, ignore_index=-100,
                           reduction="sum") / (shift_labels != -100).sum()


def hf_loss(model, h, labels):
    """LlamaForCausalLM.forward (transformers >= 4.46): `logits = self.lm_head(...)` (Gemma-2:
    soft-capped, each step rebinding `logits`), then `loss = self.loss_function(logits=logits,
    ...)`: the caller's model-dtype logits stay alive (they are also returned in the output)
    while ForCausalLMLoss runs. Trainer.compute_loss drops the output when it returns the loss,
    before backward; nothing autograd saved refers to them, so they die with it."""
    logits = capped_logits(model, h)
    return for_causal_lm_loss(logits, labels, logits.shape[-1])


def hf_shifted_loss(model, h, labels):
    """LlamaForCausalLM.forward of transformers <= 4.45 (4.36's code; Gemma2ForCausalLM 4.42's
    soft-capping before the upcast): `logits = logits.float()` rebinds the name, so the
    model-dtype logits die once the fp32 copy exists; `shift_logits = logits[..., :-1, :]
    .contiguous()` and `shift_labels = labels[..., 1:].contiguous()`, then CrossEntropyLoss()
    (mean over the non-ignored targets). The fp32 logits go out in the output (held by the
    Trainer until compute_loss returns the loss, before backward)."""
    logits = capped_logits(model, h)
    logits = logits.float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    return F.cross_entropy(shift_logits.view(-1, shift_logits.shape[-1]), shift_labels.view(-1),
                           ignore_index=-100)


def for_causal_lm_loss_shifted(logits, labels, vocab):
    """transformers 4.46-4.48 loss/loss_utils.py ForCausalLMLoss: `logits = logits.float()` into
    this scope's name (the caller's model-dtype logits stay alive; no copy when they are fp32),
    `shift_logits = logits[..., :-1, :].contiguous()` and `shift_labels = labels[..., 1:]
    .contiguous()`, then fixed_cross_entropy: cross_entropy with reduction "sum" over Trainer's
    num_items_in_batch (log_softmax saves its fp32 output over the shifted rows, nll_loss the
    shifted target)."""
    logits = logits.float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    shift_logits = shift_logits.view(-1, vocab)
    shift_labels = shift_labels.view(-1)
    return F.cross_entropy(shift_logits, shift_labels, ignore_index=-100,
                           reduction="sum") / (shift_labels != -100).sum()


def hf_shifted_kept_loss(model, h, labels):
    """LlamaForCausalLM.forward of transformers 4.46-4.48 (Gemma2ForCausalLM: soft-capped first):
    `logits = self.lm_head(...)`, then `loss = self.loss_function(logits, labels, self.vocab_size,
    **loss_kwargs)`, whose ForCausalLMLoss of that era upcasts and copies the shifted logits while
    the caller's model-dtype logits (also returned in the output, which Trainer.compute_loss drops
    before backward) stay alive."""
    logits = capped_logits(model, h)
    return for_causal_lm_loss_shifted(logits, labels, logits.shape[-1])


def chunked_loss(model, h, labels, chunk=128):
    """LitGPT GPT.forward(lm_head_chunk_size=128) + chunked_cross_entropy: logits as a list of
    128-token chunks (model dtype), cross-entropy per chunk in that dtype."""
    chunks = [F.linear(x, model.head_weight(), model.lm_head.bias) for x in h.split(chunk, dim=1)]
    labels = labels[..., 1:]
    labels = F.pad(labels, (0, 1), value=-100)
    tchunks = labels.split(chunk, dim=1)
    losses = [F.cross_entropy(lc.reshape(-1, lc.shape[-1]), tc.reshape(-1), ignore_index=-100,
                              reduction="none") for lc, tc in zip(chunks, tchunks)]
    del chunks
    n = (labels != -100).sum()
    return torch.cat(losses).sum() / n


def _nll_chunk(h, w, b, lbl, softcap):
    """trl 1.9.0 trainer/sft_trainer.py `_chunk`: the chunk's logits from fp32 copies of its
    hidden states and of the head weight (plus the bias's), optional soft-capping, log_softmax,
    nll_loss (sum), the token accuracy (argmax) and the entropy -(exp(log_p) * log_p)."""
    logits = h.float() @ w.float().t()
    if b is not None:
        logits = logits + b.float()
    if softcap is not None:
        # A 0-dim tensor for the Python float: torch 1.13's non-reentrant checkpoint packs a
        # wrapped number as a tensor under the tracker's dispatch mode and fails; the saved
        # scalar is 4 bytes either way.
        cap = torch.tensor(float(softcap))
        logits = cap * torch.tanh(logits / cap)
    log_p = F.log_softmax(logits, dim=-1)
    loss = F.nll_loss(log_p, lbl, ignore_index=-100, reduction="sum")
    valid = lbl != -100
    correct = ((logits.argmax(dim=-1) == lbl) & valid).sum().float()
    entropy = (-(log_p.exp() * log_p).sum(dim=-1) * valid).sum()
    return loss, correct, entropy


def chunked_nll_loss(model, h, labels):
    """trl 1.9.0 trainer/sft_trainer.py `_chunked_cross_entropy_loss` (SFTConfig's default
    loss_type "chunked_nll"; `_patch_chunked_ce_lm_head` runs it on the decoder's last hidden
    state, no logits): the shifted hidden states flattened (`hidden_states[..., :-1, :].reshape`,
    a copy when the batch has several rows), the valid tokens moved to the front
    (`valid.to(int8).argsort(stable=True)`, `hidden[order]`, `labels[order]`), then chunks of
    `_CHUNKED_LM_HEAD_CHUNK_SIZE` (256; config key `nll_chunk`) each under
    torch.utils.checkpoint(use_reentrant=False), summed and divided by the valid count."""
    chunk = model.c.get("nll_chunk", 256)
    softcap = model.spec.get("final_softcap")
    hidden = h[..., :-1, :].reshape(-1, h.size(-1))
    lbl = labels[..., 1:].reshape(-1)
    valid = lbl != -100
    n_valid = valid.sum()
    order = valid.to(torch.int8).argsort(descending=True, stable=True)
    hidden = hidden[order]
    lbl = lbl[order]
    n_padded = int(math.ceil(int(n_valid) / chunk)) * chunk
    loss = hidden.new_zeros((), dtype=torch.float32)
    correct = hidden.new_zeros((), dtype=torch.float32)
    entropy = hidden.new_zeros((), dtype=torch.float32)
    w = model.head_weight()
    for start in range(0, n_padded, chunk):
        cl, cc, ce = ckpt.checkpoint(_nll_chunk, hidden[start:start + chunk], w,
                                     model.lm_head.bias, lbl[start:start + chunk], softcap,
                                     use_reentrant=False)
        loss = loss + cl
        correct = correct + cc
        entropy = entropy + ce
    return loss / n_valid


def chunked_output_loss(model, h, labels, chunks=8):
    """torchtune 0.6.1: TransformerDecoder.chunked_output (the head on each tensor_split chunk of
    the sequence, model dtype) + CEWithChunkedOutputLoss.forward (labels shifted with hstack,
    each chunk's F.cross_entropy(logits.float(), labels, reduction="sum") in turn); the recipe's
    `del logits` drops the model-dtype chunks before backward. `h` comes in a one-element list
    the caller gives up (run.step, `model_returns`): TransformerDecoder.forward returns the
    logits list and its `h` dies with the frame, so only what the head saved keeps it (a chunk
    view when b = 1; with b > 1 the chunk is not contiguous and matmul's fold copies it, and the
    copy is what mm saves for a trained head)."""
    logits = [head(model, x) for x in h.pop().tensor_split(chunks, dim=1)]
    labels = torch.hstack((labels[..., 1:], torch.full_like(labels[..., :1], -100)))
    total = (labels != -100).sum()
    labels = [t.reshape(-1) for t in labels.tensor_split(chunks, dim=1)]
    flat = [c.reshape(-1, c.size(-1)) for c in logits]
    loss = 0.0
    for lc, tc in zip(flat, labels):
        loss = loss + F.cross_entropy(lc.float(), tc, ignore_index=-100, reduction="sum")
    del logits, flat
    return loss / total


chunked_output_loss.model_returns = True


def _liger_ce_kernel_(logits, target, loss_out, n_non_ignore, softcap=None):
    """liger_cross_entropy_kernel (ops/cross_entropy.py) with reduction "mean": one program per
    row reads the row, writes its loss into `loss_out` and overwrites the row with the gradient
    of the loss w.r.t. it, (softmax - one_hot(target)) / n_non_ignore (zero for an ignored row;
    through the soft-cap's tanh when `softcap` is given), in the logits' own dtype. The arithmetic
    runs in registers: emulated under on_chip(), only the in-place writes touch live storages."""
    with on_chip():
        for i in range(logits.shape[0]):
            y = int(target[i])
            if y == -100:
                logits[i].zero_()
                continue
            x = logits[i].float()
            if softcap is not None:
                t = torch.tanh(x / softcap)
                x = softcap * t
            lse = torch.logsumexp(x, 0)
            loss_out[i] = (lse - x[y]) / n_non_ignore
            g = torch.exp(x - lse)
            g[y] -= 1
            g /= n_non_ignore
            if softcap is not None:
                g *= 1 - t * t
            logits[i].copy_(g)


class _LigerFusedLinearCE(torch.autograd.Function):
    """Liger-Kernel v0.8.2 LigerFusedLinearCrossEntropyFunction (ops/fused_linear_cross_entropy.py
    fused_linear_cross_entropy_forward; the same allocations since v0.5.0 dropped the chunk's
    `.float()` copy), reduction "mean", accum_dtype None, no z-loss. In forward: grad_input
    (zeros_like the input), grad_weight (zeros_like the weight, when it requires grad),
    grad_bias (zeros_like the bias, when there is one), loss_1d (fp32, one per row) and
    target_mask (bool); then per chunk of
    next_power_of_2(ceil(BT / ceil(V / H))) rows: the chunk's logits in the model dtype
    (`_input_chunk @ weight.t()`, plus the bias as a new tensor), which the CE kernel overwrites
    with their gradient; `grad_input[s:e] = grad_logits_chunk @ weight` (a chunk x H temporary
    copied into the slice); `grad_weight += torch.mm(grad_logits_chunk.t(), _input_chunk)
    .float()` (a V x H product in the model dtype and its fp32 copy); the bias gradient's column
    sum. ctx keeps grad_input, grad_weight and grad_bias; backward scales them in place
    (element_mul_kernel) unless the incoming gradient is 1, and returns them."""

    @staticmethod
    def forward(ctx, x, w, target, bias, softcap):
        bt, h = x.shape
        v = w.shape[0]
        chunk = 1 << max(0, math.ceil(math.log2(max(1, math.ceil(bt / math.ceil(v / h))))))
        grad_input = torch.zeros_like(x)
        grad_weight = torch.zeros_like(w) if w.requires_grad else None
        grad_bias = torch.zeros_like(bias) if bias is not None else None
        loss_1d = torch.zeros(bt, dtype=torch.float32)
        target_mask = target != -100
        n = int(target_mask.sum().item())
        for s in range(0, bt, chunk):
            x_chunk = x[s : s + chunk]
            logits = x_chunk @ w.t()
            if bias is not None:
                logits = logits + bias
            _liger_ce_kernel_(logits, target[s : s + chunk], loss_1d[s : s + chunk], max(n, 1),
                              softcap)
            grad_input[s : s + chunk] = logits @ w
            if grad_weight is not None:
                grad_weight += torch.mm(logits.t(), x_chunk).float()
            if bias is not None:
                torch.add(input=grad_bias, other=logits.sum(dim=0), out=grad_bias, alpha=1.0)
            del logits
        loss = torch.sum(loss_1d)
        ctx.save_for_backward(grad_input.detach(),
                              grad_weight.detach() if grad_weight is not None else None,
                              grad_bias.detach() if grad_bias is not None else None)
        return loss

    @staticmethod
    def backward(ctx, g):
        grad_input, grad_weight, grad_bias = ctx.saved_tensors
        if not torch.equal(g, torch.tensor(1.0)):
            for t in (grad_input, grad_weight, grad_bias):
                if t is not None:
                    t.mul_(g)
        return grad_input, grad_weight, None, grad_bias, None


def fused_loss(model, h, labels):
    """Liger's LigerForCausalLMLoss (transformers/model/loss_utils.py, v0.8.2): `labels =
    pad(labels, (0, 1), value=-100)` (the name keeps the padded copy to the function's end),
    `shift_labels = labels[..., 1:].contiguous()`, hidden_states.view(-1, H) (no copy), then the
    fused function on the head's weight, bias and the final soft-cap."""
    labels = F.pad(labels, (0, 1), value=-100)
    shift_labels = labels[..., 1:].contiguous()
    b, s, d = h.shape
    return _LigerFusedLinearCE.apply(h.view(-1, d), model.head_weight(), shift_labels.view(-1),
                                     model.lm_head.bias, model.spec.get("final_softcap"))


class _VocabParallelCrossEntropy(torch.autograd.Function):
    """Megatron-Core's cross-entropy (Megatron-LM d98e8a64,
    megatron/core/tensor_parallel/cross_entropy.py: _VocabParallelCrossEntropy with the
    VocabParallelCrossEntropy helpers inlined) at tensor-parallel size 1: the all-reduces over one
    rank are no-ops and the partition's vocabulary range is the whole vocabulary.

    Forward: one fp32 copy of the logits (`.float()`), then subtract-max, exp and divide in place
    on it; ctx keeps that softmax (fp32), target_mask (bool) and masked_target_1d (int64).
    Backward: works in place on the saved softmax and returns it (fp32); the engine casts it to
    the logits' dtype (validate_outputs) while it lives. fused_cross_entropy.py (the fused path,
    NeMo's default for full fine-tuning) runs the same helpers and casts with .to(bfloat16)
    inside: the same bytes."""

    @staticmethod
    def forward(ctx, vocab_parallel_logits, target):
        # calculate_logits_max
        vocab_parallel_logits = vocab_parallel_logits.float()
        logits_max = torch.max(vocab_parallel_logits, dim=-1)[0]
        vocab_start_index, vocab_end_index = 0, vocab_parallel_logits.size()[-1]
        # calculate_predicted_logits
        vocab_parallel_logits -= logits_max.unsqueeze(dim=-1)
        target_mask = (target < vocab_start_index) | (target >= vocab_end_index)
        masked_target = target.clone() - vocab_start_index
        masked_target[target_mask] = 0
        partition_vocab_size = vocab_parallel_logits.size()[-1]
        logits_2d = vocab_parallel_logits.view(-1, partition_vocab_size)
        masked_target_1d = masked_target.view(-1)
        arange_1d = torch.arange(start=0, end=logits_2d.size()[0])
        predicted_logits_1d = logits_2d[arange_1d, masked_target_1d]
        predicted_logits_1d = predicted_logits_1d.clone().contiguous()
        predicted_logits = predicted_logits_1d.view_as(target)
        predicted_logits[target_mask] = 0.0
        exp_logits = vocab_parallel_logits
        torch.exp(vocab_parallel_logits, out=exp_logits)
        sum_exp_logits = exp_logits.sum(dim=-1)
        # calculate_cross_entropy_loss (label_smoothing 0)
        loss = torch.log(sum_exp_logits) - predicted_logits
        exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))
        ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        softmax, target_mask, masked_target_1d = ctx.saved_tensors
        # prepare_gradient_calculation_operands
        grad_input = softmax
        partition_vocab_size = softmax.size()[-1]
        grad_2d = grad_input.view(-1, partition_vocab_size)
        arange_1d = torch.arange(start=0, end=grad_2d.size()[0])
        softmax_update = 1.0 - target_mask.view(-1).float()
        # calculate_gradients
        grad_2d[arange_1d, masked_target_1d] -= softmax_update
        grad_input.mul_(grad_output.unsqueeze(dim=-1))
        return grad_input, None


def megatron_loss(model, h, labels):
    """Megatron-Core GPTModel.forward's output_layer and compute_language_model_loss
    (megatron/core/models/common/language_module/language_module.py), then NeMo 2's
    MaskedTokenLossReduction (nemo/lightning/megatron_parallel.py masked_token_loss, NeMo 8cfedd72).

    The labels arrive shifted (Megatron's datasets build them), so nothing is padded or shifted.
    Megatron's hidden states are [s, b, h]; this port keeps the [b, s] order of the ported blocks
    (the same bytes per tensor) and makes the copies that compute_language_model_loss's
    transposes make ([b s] => [s b] labels, [s b] => [b s] loss: .contiguous() copies when b > 1).
    The output layer is ColumnParallelLinear: a trained weight saves (input, weight)
    (LinearWithGradAccumulationAndAsyncCommunication), a frozen one only the weight
    (LinearWithFrozenWeight): what nn.Linear keeps."""
    logits = head(model, h)
    labels_sb = labels.transpose(0, 1).contiguous()  # the kernel's target, alive through the call
    loss = _VocabParallelCrossEntropy.apply(logits, labels)
    del labels_sb, logits  # GPTModel.forward returns: its logits die
    loss = loss.transpose(0, 1).contiguous()
    # masked_token_loss: the batch's loss_mask (Megatron GPTDataset: float ones) is kept by the mul.
    loss_mask = torch.ones(labels.shape, dtype=torch.float32)
    losses = loss.view(-1).float()
    loss_mask = loss_mask.view(-1).float()
    loss_sum = torch.sum(losses * loss_mask)
    num_valid_tokens = loss_mask.sum()
    return loss_sum / num_valid_tokens


LOSSES = {"hf": hf_loss, "hf_shifted": hf_shifted_loss, "hf_shifted_kept": hf_shifted_kept_loss, "chunked": chunked_loss, "fused": fused_loss,
          "chunked_output": chunked_output_loss, "megatron": megatron_loss,
          "chunked_nll": chunked_nll_loss}

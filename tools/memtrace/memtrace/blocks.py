"""Decoder blocks ported from Hugging Face transformers (v4.48-era modeling code), one forward per
upstream layout, keeping the operator order that decides what autograd saves:

  llama    LlamaDecoderLayer  (also mistral; qwen2 = q/k/v biases; qwen3 = per-head q/k RMSNorm;
                               phi3 = fused qkv_proj and gate_up_proj)
  gemma    GemmaDecoderLayer  (GemmaRMSNorm (1+w) in fp32, GeGLU tanh, embedding scale;
                               gemma2 = post-attention/feed-forward norms and soft-capping;
                               gemma3 = post norms and q/k norm)
  phi      PhiDecoderLayer    (phi-1.5/phi-2: one LayerNorm, attention and MLP in parallel,
                               partial rotary, biases, fc1/fc2 with gelu_new)
  gpt_neox GPTNeoXLayer       (parallel residual, fused query_key_value, partial rotary)
  gpt2     GPT2Block          (Conv1D c_attn/c_proj/c_fc, eager attention, dropout 0.1)
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from memtrace import layers as L


def _act(name):
    return {"silu": F.silu, "gelu_tanh": L.gelu_tanh, "gelu": F.gelu}[name]


class Attention(nn.Module):
    def __init__(self, c, spec, make_linear):
        super().__init__()
        self.c, self.spec = c, spec
        h, hd = c["hidden"], c["head_dim"]
        self.nh, self.nkv, self.hd = c["heads"], c["kv_heads"], hd
        q, kv = self.nh * hd, self.nkv * hd
        bias = spec.get("qkv_bias", False)
        if spec.get("fused_qkv"):
            self.qkv = make_linear(spec["fused_qkv"], h, q + 2 * kv, bias)
        else:
            self.q_proj = make_linear("q_proj", h, q, bias)
            self.k_proj = make_linear("k_proj", h, kv, bias)
            self.v_proj = make_linear("v_proj", h, kv, bias)
        self.o_proj = make_linear(spec.get("o_name", "o_proj"), q, h, spec.get("o_bias", False))
        if spec.get("qk_norm"):
            norm = L.GemmaRMSNorm if spec["norm"] == "gemma_rms" else L.RMSNorm
            self.q_norm = norm(hd)
            self.k_norm = norm(hd)
        self.rot = int(hd * spec.get("partial_rotary", 1.0))
        self.scaling = 1.0 / math.sqrt(hd)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        c = self.c
        if self.spec.get("fused_qkv") == "query_key_value":
            # GPTNeoXAttention: (b, s, heads, 3*d) then split on the last dim, transposed to heads.
            qkv = self.qkv(x).view(b, s, self.nh, 3 * self.hd).transpose(1, 2)
            q, k, v = qkv.chunk(3, dim=-1)
        elif self.spec.get("fused_qkv"):
            # Phi3Attention / GPT2Attention: slices of one projection.
            qkv = self.qkv(x)
            qd, kvd = self.nh * self.hd, self.nkv * self.hd
            q = qkv[..., :qd].view(b, s, -1, self.hd).transpose(1, 2)
            k = qkv[..., qd : qd + kvd].view(b, s, -1, self.hd).transpose(1, 2)
            v = qkv[..., qd + kvd :].view(b, s, -1, self.hd).transpose(1, 2)
        else:
            q = self.q_proj(x).view(b, s, -1, self.hd)
            k = self.k_proj(x).view(b, s, -1, self.hd)
            v = self.v_proj(x).view(b, s, -1, self.hd)
            if self.spec.get("qk_norm"):
                q, k = self.q_norm(q), self.k_norm(k)
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        if cos is not None:
            if self.rot < self.hd:
                # PhiAttention / GPTNeoX: rotary on the first `rot` dims, the rest passed through.
                q_rot, q_pass = q[..., : self.rot], q[..., self.rot :]
                k_rot, k_pass = k[..., : self.rot], k[..., self.rot :]
                q_rot, k_rot = L.apply_rotary(q_rot, k_rot, cos, sin)
                q = torch.cat((q_rot, q_pass), dim=-1)
                k = torch.cat((k_rot, k_pass), dim=-1)
            else:
                q, k = L.apply_rotary(q, k, cos, sin)
        rep = self.nh // self.nkv
        attn = c["attn"]
        if attn == "eager":
            out = L.eager_attention(q, k, v, rep, self.scaling, mask, self.spec.get("attn_dropout", 0.0),
                                    self.spec.get("attn_softcap"))
        elif attn == "sdpa":
            out = L.sdpa_attention(q, k, v, rep)
        elif attn == "math":
            out = L.math_attention(q, k, v, rep, self.scaling)
        else:  # flash_attention_2: GQA native, output (b, s, h, d)
            out = L.flash_attention(q, k, v).transpose(1, 2).contiguous()
        out = out.reshape(b, s, -1).contiguous()
        out = self.o_proj(out)
        return L.dropout(out, self.spec.get("resid_dropout", 0.0))


class MLP(nn.Module):
    def __init__(self, c, spec, make_linear):
        super().__init__()
        h, i = c["hidden"], c["intermediate"]
        self.spec = spec
        self.act = _act(spec["act"])
        bias = spec.get("mlp_bias", False)
        if spec["mlp"] == "gated":
            if spec.get("fused_gate_up"):
                self.gate_up_proj = make_linear("gate_up_proj", h, 2 * i, bias)
            else:
                self.gate_proj = make_linear("gate_proj", h, i, bias)
                self.up_proj = make_linear("up_proj", h, i, bias)
            self.down_proj = make_linear("down_proj", i, h, bias)
        else:
            up, down = spec.get("plain_names", ("fc1", "fc2"))
            self.fc1 = make_linear(up, h, i, bias)
            self.fc2 = make_linear(down, i, h, bias)

    def forward(self, x):
        if self.spec["mlp"] == "gated":
            if self.spec.get("fused_gate_up"):
                # Phi3MLP: gate, up = gate_up.chunk(2); up * act(gate)
                gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
                y = self.down_proj(up * self.act(gate))
            else:
                y = self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))
        else:
            y = self.fc2(self.act(self.fc1(x)))
        return L.dropout(y, self.spec.get("resid_dropout", 0.0))


def make_norm(spec, dim):
    kind = spec["norm"]
    if kind == "rms":
        return L.RMSNorm(dim)
    if kind == "gemma_rms":
        return L.GemmaRMSNorm(dim)
    return L.LayerNorm(dim)


class DecoderLayer(nn.Module):
    def __init__(self, c, spec, make_linear):
        super().__init__()
        self.spec = spec
        self.self_attn = Attention(c, spec, make_linear)
        self.mlp = MLP(c, spec, make_linear)
        self.input_layernorm = make_norm(spec, c["hidden"])
        if spec["residual"] != "parallel_shared_norm":
            self.post_attention_layernorm = make_norm(spec, c["hidden"])
        if spec.get("post_norms"):
            self.pre_feedforward_layernorm = make_norm(spec, c["hidden"])
            self.post_feedforward_layernorm = make_norm(spec, c["hidden"])

    def forward(self, x, cos, sin, mask):
        r = self.spec["residual"]
        if r == "parallel_shared_norm":  # PhiDecoderLayer
            residual = x
            hs = self.input_layernorm(x)
            attn = self.self_attn(hs, cos, sin, mask)
            ff = self.mlp(hs)
            return attn + ff + residual
        if r == "parallel":  # GPTNeoXLayer (use_parallel_residual=True)
            attn = self.self_attn(self.input_layernorm(x), cos, sin, mask)
            mlp = self.mlp(self.post_attention_layernorm(x))
            return mlp + attn + x
        residual = x
        hs = self.input_layernorm(x)
        hs = self.self_attn(hs, cos, sin, mask)
        if self.spec.get("post_norms"):  # Gemma2DecoderLayer / Gemma3DecoderLayer
            hs = self.post_attention_layernorm(hs)
            hs = residual + hs
            residual = hs
            hs = self.pre_feedforward_layernorm(hs)
            hs = self.mlp(hs)
            hs = self.post_feedforward_layernorm(hs)
            return residual + hs
        hs = residual + hs
        residual = hs
        hs = self.post_attention_layernorm(hs)
        hs = self.mlp(hs)
        return residual + hs

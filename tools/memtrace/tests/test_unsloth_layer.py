"""The port of Unsloth's decoder layer (memtrace.unsloth) on cases small enough to count by hand."""

import math
import unittest

import torch
import torch.nn as nn

from memtrace import layers as L
from memtrace import model as M
from memtrace import unsloth as U
from memtrace.blocks import DecoderLayer
from memtrace.run import measure
from memtrace.tracker import LiveBytes

BF16 = torch.bfloat16
ALL = ["down_proj", "gate_proj", "k_proj", "o_proj", "q_proj", "up_proj", "v_proj"]


def cfg(**kw):
    c = dict(family="llama", unsloth_layer=True, hidden=64, layers=2, heads=4, kv_heads=2,
             head_dim=16, intermediate=128, vocab=256, tied=False, method="lora", grad_ckpt="none",
             attn="flash", loss="hf", optim="adamw_foreach", batch=2, seq=16, lora_targets=ALL,
             lora_rank=4, lora_dropout=0.0, seed=1)
    c.update(kw)
    return c


def dims(c):
    T = c["batch"] * c["seq"]
    return (T, c["hidden"], c["heads"] * c["head_dim"], c["kv_heads"] * c["head_dim"],
            c["intermediate"], c["heads"], c["kv_heads"], c["lora_rank"])


def model_level(c):
    """LlamaModel_fast_forward outside the layers: the embedding output (it requires grad and the
    first layer keeps it), the int32 position ids, the final norm's r (fp32) and output."""
    T, h = dims(c)[:2]
    return 2 * T * h + 4 * T + 4 * T + 2 * T * h


def fused_layer(c):
    """One layer with every group fused, kept after the forward (bf16 = 2 B, fp32 = 4 B):
    input_layernorm r; n1 (LoRA_QKV's X); the rope clones of Q and K (flash-attn's q, k; K is
    rotated in place, no clone, when kv_heads = 1: the same bytes); V; the attention output
    (also LoRA_W's X) and lse; r1 (the residual, the post norm's X); its r; n2 (LoRA_MLP's X);
    e and g; the layer output."""
    T, h, q, kv, i, nh, nkv, r = dims(c)
    return (4 * T + 2 * T * h + 2 * T * q + 2 * T * kv + 2 * T * kv + 2 * T * q + 4 * T * nh
            + 2 * T * h + 4 * T + 2 * T * h + 2 * 2 * T * i + 2 * T * h)


class SavedTensorsTest(unittest.TestCase):
    def test_llama_lora_all_targets(self):
        c = cfg()
        m = measure(c)
        self.assertEqual(m["activations"], c["layers"] * fused_layer(c) + model_level(c))
        self.assertEqual(m["inputs"], 3 * 8 * 32)  # input_ids, labels, position_ids

    def test_llama_qlora_keeps_the_same(self):
        # matmul_lora's 4-bit product goes through the global buffer: nothing more is kept.
        c = cfg(method="qlora", kv_heads=1)
        m = measure(c)
        self.assertEqual(m["activations"], c["layers"] * fused_layer(c) + model_level(c))

    def test_qwen3_norms_keep_the_projections(self):
        # q_norm / k_norm keep LoRA_QKV's Q and K (their X) and an fp32 r per head row; their
        # outputs die once rope has cloned them.
        c = cfg(family="qwen3")
        T, h, q, kv, i, nh, nkv, r = dims(c)
        extra = 2 * T * q + 2 * T * kv + 4 * T * nh + 4 * T * nkv
        self.assertEqual(measure(c)["activations"],
                         c["layers"] * (fused_layer(c) + extra) + model_level(c))

    def test_checkpointed_layers_keep_their_inputs(self):
        c = cfg(grad_ckpt="full", method="qlora")
        T, h = dims(c)[:2]
        # Each layer's input (the embedding output for the first), the last layer's output (the
        # final norm's X), position ids, final r and output.
        self.assertEqual(measure(c)["activations"], 2 * T * h * (c["layers"] + 2) + 8 * T)


class PatchingTest(unittest.TestCase):
    def test_unpatched_groups_run_peft(self):
        # q_proj and v_proj only: LoRA_QKV needs all three, o_proj and the MLP have no LoRA, so
        # every group is PEFT's / transformers' own (original_apply_qkv, original_apply_o,
        # LlamaMLP).
        c = cfg(lora_targets=["q_proj", "v_proj"])
        layer = M.CausalLM(c).layers[0]
        self.assertFalse(layer.self_attn.fused_qkv)
        self.assertFalse(layer.self_attn.fused_o)
        self.assertFalse(layer.fused_mlp)
        self.assertIsInstance(layer.self_attn.q_proj, L.LoraLinear)
        T, h, q, kv, i, nh, nkv, r = dims(c)
        # PEFT's Linear.forward keeps x.to(fp32) (lora_A's input) and lora_A's output (fp32) per
        # adapted projection; frozen linears keep no input, so n1 and n2 die; LlamaMLP keeps
        # gate's output (silu's input), silu's output and up's output.
        per = (4 * T + 2 * (4 * T * h + 4 * T * r) + 2 * T * q + 2 * T * kv + 2 * T * kv
               + 2 * T * q + 4 * T * nh + 2 * T * h + 4 * T + 3 * 2 * T * i + 2 * T * h)
        self.assertEqual(measure(c)["activations"], c["layers"] * per + model_level(c))

    def test_qwen2_biases_keep_qkv_unfused(self):
        layer = M.CausalLM(cfg(family="qwen2")).layers[0]
        self.assertFalse(layer.self_attn.fused_qkv)
        self.assertTrue(layer.self_attn.fused_o)
        self.assertTrue(layer.fused_mlp)

    def test_dropout_keeps_everything_unfused(self):
        layer = M.CausalLM(cfg(lora_dropout=0.1)).layers[0]
        self.assertFalse(layer.self_attn.fused_qkv or layer.self_attn.fused_o or layer.fused_mlp)


class BuffersTest(unittest.TestCase):
    def test_qlora_global_buffers_hold_the_largest_fused_weight(self):
        c = cfg(method="qlora")
        T, h, q, kv, i = dims(c)[:5]
        rope = 2 * c["seq"] * c["head_dim"] * 2  # cos, sin: max_position (= seq) rows, bf16
        w = max(q * h, kv * h, h * i)
        self.assertEqual(measure(c)["buffers"], rope + 2 * w + math.ceil(w / 64) * 4)
        # o_proj alone fused: the buffer is o_proj's size, not the model's largest weight.
        c = cfg(method="qlora", lora_targets=["o_proj"], max_position=40)
        self.assertEqual(measure(c)["buffers"],
                         2 * 40 * 16 * 2 + 2 * h * q + math.ceil(h * q / 64) * 4)

    def test_lora_keeps_only_the_rope_cache(self):
        self.assertEqual(measure(cfg())["buffers"], 2 * 16 * 16 * 2)

    def test_rope_cache_grows_past_32k_in_8192_steps(self):
        self.assertEqual(U.rope_rows(cfg(max_position=4096)), 4096)
        self.assertEqual(U.rope_rows(cfg(max_position=131072)), 131072)
        self.assertEqual(U.rope_rows(cfg(max_position=40000)), 40960)
        self.assertEqual(U.rope_rows(cfg(max_position=8, seq=16)), 8192)

    def test_other_configs_report_zero(self):
        c = cfg(unsloth_layer=False, attn="sdpa")
        m = measure(c)
        self.assertEqual(m["buffers"], 0)
        self.assertEqual(m["inputs"], 2 * 8 * 32)


def _lora(d_in, d_out, r, quant):
    base = L.Linear4bit(d_in, d_out, BF16) if quant else nn.Linear(d_in, d_out, bias=False,
                                                                    dtype=BF16)
    return L.LoraLinear(base, d_in, d_out, r, 2 * r, 0.0, torch.float32)


def engine_casts(sizes, beside=0):
    """The autograd engine's validate_outputs after a Function's backward returned (its bf16
    adapter casts died with the frame): each bf16 gradient in turn gets its fp32 copy, and the
    previous bf16 one is freed as it is replaced. At the k-th copy: fp32 of the first k, bf16 of
    the k-th and later ones."""
    return max(beside + 4 * sum(sizes[: k + 1]) + 2 * sum(sizes[k:]) for k in range(len(sizes)))


class FunctionAllocationTest(unittest.TestCase):
    """The backward's allocation sequence of LoRA_W and LoRA_QKV, by hand. T = 12, r = 4."""

    B, S, R = 2, 6, 4

    def _backward_peak(self, fn, x, mods):
        U.reset_global_buffers()
        fn(x)  # a first forward creates the global buffers (QLoRA), as a first step does
        t = LiveBytes()
        t.adopt([x, *U.global_buffers()] + [p for mod in mods for p in mod.parameters()])
        with t:
            out = fn(x)  # tracked, so that what it saves is known to the tracker
            outs = out if isinstance(out, tuple) else (out,)
            grads = [torch.ones_like(o) for o in outs]
            base = t.mark("start")
            torch.autograd.backward(outs, grads)
            after = t.mark("end") - base
        return t.peak - base, after

    def test_lora_w(self):
        T, q, h, r = self.B * self.S, 16, 8, self.R
        C = G = 2 * (r * q + h * r)  # the bf16 casts of A and B; d_A, d_B
        for quant in (False, True):
            o = _lora(q, h, r, quant)
            x = torch.randn(self.B, self.S, q).to(BF16).requires_grad_(True)
            peak, after = self._backward_peak(lambda x: U.apply_lora_o(_Mods(o_proj=o), x), x,
                                              [o])
            # dX = dY @ W.t() is new (2*T*q) while the dequantized W (2*h*q, QLoRA) is alive;
            # later dY @ B.t() (2*T*r) beside dX.
            w = 2 * h * q if quant else 0
            self.assertEqual(peak, max(C + G + 2 * T * q + max(w, 2 * T * r),
                                       engine_casts([r * q, h * r], beside=2 * T * q)), quant)
            # Left: x.grad (dX), and the fp32 casts of d_A, d_B as the adapters' grads.
            self.assertEqual(after, 2 * T * q + 4 * (r * q + h * r))

    def test_lora_qkv_writes_dx_into_its_saved_input(self):
        T, h, q, kv, r = self.B * self.S, 64, 32, 16, self.R
        C = G = 2 * (3 * r * h + r * (q + 2 * kv))
        for quant in (False, True):
            mods = [_lora(h, q, r, quant), _lora(h, kv, r, quant), _lora(h, kv, r, quant)]
            attn = _Mods(q_proj=mods[0], k_proj=mods[1], v_proj=mods[2])
            x = torch.randn(self.B, self.S, h).to(BF16).requires_grad_(True)
            peak, after = self._backward_peak(lambda x: U.apply_lora_qkv(attn, x), x, mods)
            # The largest moment: Q's dequantized weight (2*q*h) and the fp32 absmax temporary
            # (ceil(q*h/64) * 4) inside fast_dequantize; for LoRA, an r x T product.
            top = 2 * q * h + math.ceil(q * h / 64) * 4 if quant else 2 * T * r
            casts = engine_casts([r * h, q * r, r * h, kv * r, r * h, kv * r])
            self.assertEqual(peak, max(C + G + top, casts), quant)
            if not quant:  # here the engine's casts are the peak (4480 > 4192)
                self.assertGreater(casts, C + G + top)
            # dX lives in x's own storage: nothing left but the adapters' fp32 grads.
            self.assertEqual(after, 4 * (3 * r * h + r * (q + 2 * kv)))
            self.assertEqual(x.grad.data_ptr(), x.data_ptr())

    def test_lora_mlp(self):
        T, h, i, r = self.B * self.S, 8, 16, self.R
        sizes = [r * h, i * r, r * h, i * r, r * i, h * r]  # gate A, B, up A, B, down A, B
        C = G = 2 * sum(sizes)
        for quant in (False, True):
            mods = [_lora(h, i, r, quant), _lora(h, i, r, quant), _lora(i, h, r, quant)]
            mlp = _Mods(gate_proj=mods[0], up_proj=mods[1], down_proj=mods[2])
            x = torch.randn(self.B, self.S, h).to(BF16).requires_grad_(True)
            peak, after = self._backward_peak(lambda x: U.apply_lora_mlp_swiglu(mlp, x), x, mods)
            # Casts, DW (2*T*i: down's transposed product, its 4-bit weight in the global buffer),
            # the six grads, then up's (and gate's) dequantized weight with its absmax temporary,
            # or for LoRA an r x T product.
            top = 2 * i * h + math.ceil(i * h / 64) * 4 if quant else 2 * T * r
            self.assertEqual(peak, max(C + G + 2 * T * i + top, engine_casts(sizes)), quant)
            # dX went into x; the saved e and g (df, de by now) are released after the engine's
            # casts; the adapters' fp32 grads stay.
            self.assertEqual(after, 4 * sum(sizes) - 2 * 2 * T * i)
            self.assertEqual(x.grad.data_ptr(), x.data_ptr())


class _Mods:
    def __init__(self, **mods):
        self.__dict__.update(mods)


class RopeTest(unittest.TestCase):
    def test_clone_keeps_the_projection_layout_so_the_view_backward_copies_nothing(self):
        b, s, nh, hd = 2, 5, 4, 8
        cache = U.RopeCache(dict(head_dim=hd, seq=s), BF16)
        pos = torch.arange(s).repeat(b, 1).to(torch.int32)
        proj = torch.randn(b, s, nh * hd).to(BF16).requires_grad_(True)
        t = LiveBytes()
        t.adopt([proj, pos] + cache.tensors())
        with t:
            base = t.mark("start")
            Qv = proj.view(b, s, nh, hd).transpose(1, 2)
            Kv = proj.view(b, s, nh, hd).transpose(1, 2)
            Q, K = U.fast_rope_embedding(Qv, Kv, cache.cos, cache.sin, pos)
            self.assertEqual(t.mark("fwd") - base, 2 * 2 * b * s * nh * hd)  # the two clones
            self.assertEqual(Q.stride(), Qv.stride())
            gq = torch.ones_like(Q)  # flash-attn's dq: laid out (b, s, heads, hd), like q
            gk = torch.ones_like(K)
            mid = t.mark("grads")
            torch.autograd.backward((Q, K), (gq, gk))
            # The backward clones dQ and dK (neither contiguous as (b, heads, s, hd)); the
            # transpose / view backwards then see a contiguous (b, s, heads, hd) gradient: no
            # reshape copy; the two gradients are summed into proj.grad.
            self.assertEqual(t.peak - mid, 2 * 2 * b * s * nh * hd + 2 * b * s * nh * hd)


class ValuesTest(unittest.TestCase):
    def test_layer_matches_the_transformers_layer(self):
        for fam in ("llama", "qwen3"):
            c = cfg(family=fam, layers=1, hidden=32, heads=2, kv_heads=1, head_dim=16,
                    intermediate=48, seq=6)
            torch.manual_seed(0)
            m = M.CausalLM(c)
            ul = m.layers[0]
            hf = DecoderLayer(c, m.spec, lambda n, i, o, bias: _lora(i, o, 4, False)
                              if n in ALL else nn.Linear(i, o, bias=bias, dtype=BF16))
            hf.load_state_dict(ul.state_dict())
            for mod in (ul, hf):
                for n, p in mod.named_parameters():
                    p.requires_grad_("lora_" in n)
            b, s, h = 2, 6, 32
            x = torch.randn(b, s, h).to(BF16)
            pos = torch.arange(s).repeat(b, 1).to(torch.int32)
            x1 = x.clone().requires_grad_(True)
            y1 = ul(x1, pos, m.rope.cos, m.rope.sin)
            x2 = x.clone().requires_grad_(True)
            cos, sin = L.rotary_cos_sin(b, s, 16, BF16)
            y2 = hf(x2, cos, sin, None)
            torch.testing.assert_close(y1.float(), y2.float(), atol=6e-2, rtol=5e-2)
            g = torch.randn(b, s, h).to(BF16)
            y1.backward(g)
            y2.backward(g)
            torch.testing.assert_close(x1.grad.float(), x2.grad.float(), atol=6e-2, rtol=5e-2)
            p2 = dict(hf.named_parameters())
            for n, p in ul.named_parameters():
                if p.grad is not None:
                    ref = p2[n].grad
                    scale = ref.abs().max().item() + 1e-3
                    self.assertLess((p.grad - ref).abs().max().item() / scale, 0.05, f"{fam} {n}")


if __name__ == "__main__":
    unittest.main()

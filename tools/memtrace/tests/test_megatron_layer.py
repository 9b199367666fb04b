"""The port of Megatron-Core's TE layer (memtrace.megatron) on cases small enough to count by hand:
T = 6 tokens, hidden 8, bf16."""

import unittest

import torch
import torch.nn.functional as F

from memtrace import megatron as MG
from memtrace.tracker import LiveBytes

T, H, OUT = 6, 8, 12
BF16 = torch.bfloat16


def _ref(x, ln_w, w, eps=1e-5):
    x32 = x.float()
    n = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * ln_w.float()
    return F.linear(n.to(x.dtype).float(), w.float())


class TELayerNormLinearTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.x = torch.randn(1, T, H).to(BF16).requires_grad_(True)  # 96 B, the layer input

    def test_values_and_gradients_are_rmsnorm_then_linear(self):
        m = MG.TELayerNormLinear(H, OUT, False, BF16)
        y = m(self.x)
        torch.testing.assert_close(y.float(), _ref(self.x, m.layer_norm_weight, m.weight),
                                   atol=3e-2, rtol=3e-2)
        y.float().sum().backward()
        x2 = self.x.detach().float().requires_grad_(True)
        w2 = m.weight.detach().float().requires_grad_(True)
        lw2 = m.layer_norm_weight.detach().float().requires_grad_(True)
        _ref(x2, lw2, w2).sum().backward()
        torch.testing.assert_close(self.x.grad.float(), x2.grad, atol=5e-2, rtol=5e-2)
        torch.testing.assert_close(m.weight.grad.float(), w2.grad, atol=5e-2, rtol=5e-2)
        torch.testing.assert_close(m.layer_norm_weight.grad.float(), lw2.grad, atol=5e-2, rtol=5e-2)

    def _kept(self, m):
        t = LiveBytes()
        t.adopt([self.x] + list(m.parameters()))
        with t:
            base = t.mark("start")
            y = m(self.x)
            kept = t.mark("after") - base
            del y
        return kept

    def test_trained_weight_keeps_input_rsigma_and_ln_out(self):
        # x is the caller's; kept: rsigma 4*T = 24, ln_out 2*T*H = 96, the output 2*T*OUT = 144.
        self.assertEqual(self._kept(MG.TELayerNormLinear(H, OUT, False, BF16)), 24 + 96 + 144)

    def test_frozen_weight_drops_ln_out(self):
        m = MG.TELayerNormLinear(H, OUT, False, BF16)
        m.requires_grad_(False)
        self.assertEqual(self._kept(m), 24 + 144)

    def test_lora_keeps_ln_out_once_for_both(self):
        # NeMo LoRALinear: return_layernorm_output hands ln_out (kept by TE) to linear_in, which
        # keeps the same tensor; linear_in's output (2*T*r = 48) is kept by linear_out; the
        # adapter's scaled output and the sum are new (2*T*OUT each); the base output is freed.
        base = MG.TELayerNormLinear(H, OUT, False, BF16)
        base.requires_grad_(False)
        m = MG.LoRALinear(base, MG.Adapter(H, OUT, 4, 8, BF16))
        self.assertEqual(self._kept(m), 24 + 96 + 48 + 144)


class SwiGLUTest(unittest.TestCase):
    def test_keeps_its_input_and_matches_silu_gate(self):
        torch.manual_seed(0)
        y = torch.randn(T, 2 * H).to(BF16).requires_grad_(True)
        t = LiveBytes()
        t.adopt([y])
        with t:
            base = t.mark("start")
            out = MG._SwiGLU.apply(y)
            # the output 2*T*H = 96; the input is the caller's and stays (saved): nothing else.
            self.assertEqual(t.mark("after") - base, 96)
            self.assertEqual(t.peak - base, 96)
        a, b = y.detach().float().chunk(2, -1)
        torch.testing.assert_close(out.float(), F.silu(a) * b, atol=3e-2, rtol=3e-2)
        out.float().sum().backward()
        y2 = y.detach().float().requires_grad_(True)
        a2, b2 = y2.chunk(2, -1)
        (F.silu(a2) * b2).sum().backward()
        torch.testing.assert_close(y.grad.float(), y2.grad, atol=5e-2, rtol=5e-2)


if __name__ == "__main__":
    unittest.main()

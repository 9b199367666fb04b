"""The port of Liger-Kernel's fused linear cross-entropy (memtrace.model._LigerFusedLinearCE) on a
case small enough to count by hand: BT = 12 rows, H = 8, V = 32, bf16. Liger's chunk rule:
next_power_of_2(ceil(12 / ceil(32 / 8))) = 4 rows, three chunks."""

import unittest

import torch
import torch.nn.functional as F

from memtrace.model import _LigerFusedLinearCE
from memtrace.tracker import LiveBytes

BT, H, V = 12, 8, 32


class LigerFusedLinearCrossEntropyTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.x = torch.randn(BT, H).to(torch.bfloat16).requires_grad_(True)  # 192 B
        self.w = torch.randn(V, H).to(torch.bfloat16)  # 512 B
        self.target = torch.randint(0, V, (BT,))  # 96 B
        self.target[3] = -100

    def test_loss_and_gradients_are_cross_entropy_of_the_linear(self):
        w = self.w.clone().requires_grad_(True)
        loss = _LigerFusedLinearCE.apply(self.x, w, self.target, None, None)
        x32 = self.x.detach().float().requires_grad_(True)
        w32 = w.detach().float().requires_grad_(True)
        ref = F.cross_entropy(x32 @ w32.t(), self.target, ignore_index=-100)
        ref.backward()
        torch.testing.assert_close(loss, ref.detach(), atol=2e-2, rtol=0)
        loss.backward()
        torch.testing.assert_close(self.x.grad.float(), x32.grad, atol=2e-2, rtol=0)
        torch.testing.assert_close(w.grad.float(), w32.grad, atol=2e-2, rtol=0)

    def _measure(self, w):
        m = LiveBytes()
        m.adopt([self.x, w, self.target])
        with m:
            base = m.mark("start")
            loss = _LigerFusedLinearCE.apply(self.x, w, self.target, None, None)
            kept = m.mark("after") - base
            peak = m.peak - base
            m.reset_peak()
            before = m.mark("backward")
            loss.backward()
            backward = m.peak - before
            del loss
        return kept, peak, backward

    def test_frozen_head_holds_one_chunk_of_model_dtype_logits(self):
        kept, peak, backward = self._measure(self.w)
        # grad_input (BT x H bf16) 192, loss_1d (fp32) 48, target_mask (bool) 12; one chunk's
        # logits (4 x 32 bf16) 256, overwritten in place with their gradient, and the product
        # grad_logits @ weight (4 x 8 bf16) 64 before it is copied into grad_input's slice.
        self.assertEqual(peak, 192 + 48 + 12 + 256 + 64)
        # ctx keeps grad_input; the loss is a 0-dim fp32.
        self.assertEqual(kept, 192 + 4)
        # Backward returns the kept gradient: only torch.equal's 1.0 (4 B) and the incoming 1.0.
        self.assertLessEqual(backward, 8)

    def test_trained_head_adds_its_gradient_and_the_fp32_copy_of_each_product(self):
        w = self.w.clone().requires_grad_(True)
        kept, peak, _ = self._measure(w)
        # grad_weight (V x H bf16) 512 beside the frozen case's set; at the chunk's
        # `grad_weight += torch.mm(grad_logits_chunk.t(), _input_chunk).float()`: the bf16
        # product 512 and its fp32 copy 1024, with the chunk's logits 256.
        self.assertEqual(peak, 192 + 512 + 48 + 12 + 256 + 512 + 1024)
        self.assertEqual(kept, 192 + 512 + 4)


if __name__ == "__main__":
    unittest.main()

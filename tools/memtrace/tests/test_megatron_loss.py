"""The port of Megatron-Core's cross-entropy (memtrace.model._VocabParallelCrossEntropy) on a case
small enough to count by hand: T = 6 tokens, V = 16, bf16 logits."""

import unittest

import torch
import torch.nn.functional as F

from memtrace.model import _VocabParallelCrossEntropy
from memtrace.tracker import LiveBytes

T, V = 6, 16


class MegatronCrossEntropyTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.logits = torch.randn(T, V).to(torch.bfloat16).requires_grad_(True)  # 192 B, leaf
        self.target = torch.randint(0, V, (T,))  # 48 B

    def test_values_and_gradient_are_cross_entropy(self):
        loss = _VocabParallelCrossEntropy.apply(self.logits, self.target)
        ref = F.cross_entropy(self.logits.float(), self.target, reduction="none")
        torch.testing.assert_close(loss, ref)
        loss.sum().backward()
        g = torch.softmax(self.logits.float(), -1)
        g[torch.arange(T), self.target] -= 1
        self.assertEqual(self.logits.grad.dtype, torch.bfloat16)  # the engine's cast
        torch.testing.assert_close(self.logits.grad.float(), g, atol=1e-2, rtol=0)

    def test_keeps_the_fp32_softmax_the_mask_and_the_target(self):
        m = LiveBytes()
        m.adopt([self.logits, self.target])
        with m:
            base = m.mark("start")
            loss = _VocabParallelCrossEntropy.apply(self.logits, self.target)
            kept = m.mark("after") - base
            # softmax fp32 4*T*V = 384, target_mask bool T = 6, masked_target int64 8*T = 48,
            # the loss fp32 4*T = 24.
            self.assertEqual(kept, 384 + 6 + 48 + 24)
            # Forward peak above the inputs: the fp32 copy (384) at log(sum_exp) - predicted with
            # target_mask 6, masked_target 48, arange 48, logits_max 24, predicted 24, sum_exp 24,
            # the log 24 and the loss 24: 37 bytes a token.
            self.assertEqual(m.peak - base, 384 + 37 * T)
            m.reset_peak()
            before = m.mark("backward")
            loss.backward(torch.ones(T))  # grad_output: 24 B
            # The fp32 gradient is the saved softmax (in place); its working set (grad_output 24,
            # 1 - mask 24, arange 48, the gathered column 24: 120) comes before the engine's bf16
            # copy (2*T*V = 192), made while the softmax still lives, which is the peak.
            self.assertEqual(m.peak - before, 24 + 192)
            del loss


if __name__ == "__main__":
    unittest.main()

"""The HF loss by transformers release (model.hf_loss 4.49+, hf_shifted_kept_loss 4.46-4.48,
hf_shifted_loss <= 4.45) on a case small enough to count by hand: batch 2 x 4 tokens (T = 8, the
shifted rows b x (s - 1) = 6), vocabulary 32, hidden 8, bf16, a frozen head. What each keeps and
where its forward peaks, above the hidden states, the head and the labels."""

import types
import unittest

import torch

from memtrace import configs
from memtrace.model import hf_loss, hf_shifted_kept_loss, hf_shifted_loss
from memtrace.tracker import LiveBytes

B, S, H, V = 2, 4, 8, 32
T, ROWS = B * S, B * (S - 1)
SMALL = 32  # the loss's scalars: nll_loss's output and total_weight, the item count, the division


def measure(loss_fn):
    torch.manual_seed(0)
    w = torch.randn(V, H).to(torch.bfloat16)
    h = torch.randn(B, S, H).to(torch.bfloat16).requires_grad_(True)
    labels = torch.randint(0, V, (B, S))
    labels[0, 1] = -100
    model = types.SimpleNamespace(spec={}, head_weight=lambda: w,
                                  lm_head=types.SimpleNamespace(bias=None))
    m = LiveBytes()
    m.adopt([w, h, labels])
    with m:
        base = m.mark("start")
        loss = loss_fn(model, h, labels)
        kept = m.mark("after") - base
        peak = m.peak - base
        m.reset_peak()
        before = m.mark("backward")
        loss.backward()
        backward = m.peak - before
        del loss
    return peak, kept, backward, h.grad


class HfLossVersionsTest(unittest.TestCase):
    def test_same_loss_and_gradient_in_every_release(self):
        # The sum over the non-ignored targets divided by their count is the mean.
        g = [measure(f)[3].float() for f in (hf_loss, hf_shifted_kept_loss, hf_shifted_loss)]
        torch.testing.assert_close(g[1], g[2], atol=1e-2, rtol=0)
        torch.testing.assert_close(g[0], g[1], atol=1e-2, rtol=0)

    def test_4_46_to_4_48_forward_holds_the_callers_logits_beside_the_shifted_copy(self):
        peak, kept, backward, _ = measure(hf_shifted_kept_loss)
        # The caller's bf16 logits 8 x 32 x 2 = 512, their fp32 copy 8 x 32 x 4 = 1024, the
        # shifted copy 6 x 32 x 4 = 768, the shifted labels 6 x 8 = 48, the log-softmax 768:
        # 3120 (14 V bytes a token, less the two rows the shift drops).
        self.assertAlmostEqual(peak, 512 + 1024 + 768 + 48 + 768, delta=SMALL)
        # Kept: the log-softmax (log_softmax's output, nll_loss's input) and the shifted target.
        self.assertAlmostEqual(kept, 768 + 48, delta=SMALL)
        # Backward at log_softmax_backward: nll_loss's gradient and the grad input, 768 each,
        # beside the kept log-softmax (counted before it), less the target nll_loss's backward
        # released once it ran (48); slice's full-size zero-filled fp32 gradient (1024) comes
        # after those die, below that.
        self.assertAlmostEqual(backward, 768 + 768 - 48, delta=SMALL)

    def test_4_45_drops_the_model_dtype_logits_and_4_49_copies_no_logits(self):
        shifted_peak, shifted_kept, _, _ = measure(hf_shifted_loss)
        # <= 4.45: the bf16 logits die with the rebinding `logits = logits.float()`.
        self.assertAlmostEqual(shifted_peak, 1024 + 768 + 48 + 768, delta=SMALL)
        self.assertAlmostEqual(shifted_kept, 768 + 48, delta=SMALL)
        hf_peak, hf_kept, _, _ = measure(hf_loss)
        # >= 4.49: bf16 logits 512, fp32 copy 1024, padded labels 2 x 5 x 8 = 80, shifted labels
        # 2 x 4 x 8 = 64, the log-softmax over all 8 rows 1024.
        self.assertAlmostEqual(hf_peak, 512 + 1024 + 80 + 64 + 1024, delta=SMALL)
        self.assertAlmostEqual(hf_kept, 1024 + 64, delta=SMALL)

    def test_agreement_draws_run_each_release(self):
        losses = [c["loss"] for c in configs.random_configs(220)]
        for loss in ("hf", "hf_shifted", "hf_shifted_kept"):
            self.assertIn(loss, losses)

if __name__ == "__main__":
    unittest.main()

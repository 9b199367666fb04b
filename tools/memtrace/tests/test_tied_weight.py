"""model.TiedWeight: a weight used by two autograd nodes (the tied embedding and head) gets the
same gradient as plain autograd gives it, and while the second gradient is added in, two
weight-sized gradients are alive, not three (torch >= 2.0 InputBuffer::accumulate adds in place;
torch 1.13, the tracer's engine, allocated old + new)."""

import unittest

import torch
import torch.nn.functional as F

from memtrace.model import TiedWeight
from memtrace.tracker import LiveBytes

V, H, T = 512, 32, 4  # the weight dwarfs the logits: the peak is the embedding backward


def step(weight, tie):
    ids = torch.arange(T) % V
    w_embed = tie.use() if tie else weight
    w_head = tie.use() if tie else weight
    F.linear(F.embedding(ids, w_embed), w_head).pow(2).sum().backward()


class TiedWeightTest(unittest.TestCase):
    def test_same_gradient_as_plain_autograd(self):
        torch.manual_seed(0)
        plain = torch.nn.Parameter(torch.randn(V, H))
        tied = torch.nn.Parameter(plain.detach().clone())
        step(plain, None)
        step(tied, TiedWeight(tied))
        torch.testing.assert_close(tied.grad, plain.grad)

    def test_two_weight_sized_gradients_at_the_embedding_backward_not_three(self):
        wbytes = V * H * 4

        def peak(use_tie):
            w = torch.nn.Parameter(torch.randn(V, H))
            tr = LiveBytes()
            tr.adopt([w])
            with tr:
                tr.reset_peak()
                step(w, TiedWeight(w) if use_tie else None)
            return tr.peak - wbytes  # above the weight itself

        small = 64  # the ids (int64) and the loss's scalars
        # The embedding's backward: the head's gradient waiting, the new one, and the gradient
        # of the embedding output (its input, T x H fp32) alive at once.
        self.assertAlmostEqual(peak(True), 2 * wbytes + T * H * 4, delta=small)
        # torch 1.13's out-of-place add: head's + embedding's + their sum.
        self.assertAlmostEqual(peak(False), 3 * wbytes, delta=small)


if __name__ == "__main__":
    unittest.main()

"""A trained head run in several matmuls (torchtune's chunked output: the one weight on each of
8 sequence chunks) sums its gradients in the AccumulateGrad node's input buffer before the node
runs, so at the head's backward two weight-sized gradients are alive where one matmul has one
(src/plan/autograd_sim.cpp `head_grad_summed`; with torch >= 2.0's in-place
InputBuffer::accumulate, which model.TiedWeight emulates on the tracer's torch 1.13, whose
`old + new` made a third)."""

import unittest

import torch
import torch.nn.functional as F

from memtrace.model import TiedWeight
from memtrace.tracker import LiveBytes

T, H, V = 16, 32, 100000  # the weight (12.8 MB) dwarfs the logits (6.4 MB, fp32)


def backward_peak_in_weight_grads(chunks, emulate_inplace):
    w = torch.nn.Parameter(torch.randn(V, H))
    h0 = torch.randn(T, H, requires_grad=True)
    tie = TiedWeight(w) if emulate_inplace else None
    tr = LiveBytes()
    tr.adopt([w, h0])
    with tr:
        h = h0 * 1.0
        outs = [c @ (tie.use() if tie else w).t() for c in h.chunk(chunks)]
        zeros = torch.zeros(T // chunks, dtype=torch.long)
        loss = sum(F.cross_entropy(o, zeros, reduction="sum") for o in outs)
        del outs
        tr.set_phase("backward")
        start = tr.current
        loss.backward()
    return (tr.phase_peak["backward"] - start) / (V * H * 4)


class ChunkedHeadTest(unittest.TestCase):
    def test_one_matmul_holds_one_weight_gradient(self):
        self.assertAlmostEqual(backward_peak_in_weight_grads(1, False), 1.0, places=2)

    def test_eight_chunks_hold_two_with_in_place_accumulation(self):
        # The running sum and the next chunk's gradient (the loss's own saved tensors, which the
        # start counted, are partly gone by then: 1.94 here).
        peak = backward_peak_in_weight_grads(8, True)
        self.assertGreater(peak, 1.9)
        self.assertLess(peak, 2.1)

    def test_torch_1_13_made_a_third(self):
        self.assertGreater(backward_peak_in_weight_grads(8, False), 2.5)


if __name__ == "__main__":
    unittest.main()

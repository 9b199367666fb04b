"""autocast's cast cache, measured on the engine (aten/src/ATen/autocast_mode.cpp cached_cast: the
lower-precision copy of an fp32 tensor is cached only when it is a leaf that requires grad, for
the life of the outermost autocast region). The estimator's autocast copies
(SimRun::autocast_base_copies) rest on what these cases show: a frozen fp32 weight is cast again
at every call and its copy lives on in the backward graph when the call's input requires grad; a
trained weight is cast once per region."""

import unittest

import torch

from memtrace.tracker import LiveBytes

IN, OUT, TOKENS = 64, 32, 8
W32 = IN * OUT * 4  # the fp32 weight
W16 = IN * OUT * 2  # one bf16 copy of it
Y16 = TOKENS * OUT * 2  # one bf16 output
X16 = TOKENS * IN * 2  # one bf16 copy of the input


class AutocastCastCacheTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(IN, OUT, bias=False)  # fp32
        self.m = LiveBytes()
        self.m.adopt([self.lin.weight])

    def delta(self, base):
        torch.zeros(1)  # an op runs, so the tracker sweeps what died
        return self.m.current - base  # both readings include one 4-byte zeros(1)

    def test_frozen_weight_is_cast_per_call_and_kept_when_the_input_needs_a_grad(self):
        self.lin.weight.requires_grad_(False)
        with self.m:
            x = torch.randn(TOKENS, IN).requires_grad_(True)
            torch.zeros(1)
            base = self.m.current
            with torch.autocast("cpu", dtype=torch.bfloat16):
                y1 = self.lin(x)
                y2 = self.lin(x)
            # two calls, two copies, each kept for the gradient of x (no cache: not trained)
            self.assertEqual(self.delta(base), 2 * W16 + 2 * Y16)
            del y1, y2

    def test_frozen_weight_copy_dies_when_no_gradient_flows(self):
        self.lin.weight.requires_grad_(False)
        with self.m:
            x = torch.randn(TOKENS, IN)
            torch.zeros(1)
            base = self.m.current
            with torch.autocast("cpu", dtype=torch.bfloat16):
                y = self.lin(x)
            self.assertEqual(self.delta(base), Y16)
            del y

    def test_trained_weight_is_cast_once_per_region(self):
        self.lin.weight.requires_grad_(True)
        with self.m:
            x = torch.randn(TOKENS, IN)
            torch.zeros(1)
            base = self.m.current
            with torch.autocast("cpu", dtype=torch.bfloat16):
                y1 = self.lin(x)
                y2 = self.lin(x)
                # one cached copy; each call keeps its bf16 input for the weight's gradient
                self.assertEqual(self.delta(base), W16 + 2 * X16 + 2 * Y16)
            # leaving the region clears the cache: the copy was not needed by backward
            self.assertEqual(self.delta(base), 2 * X16 + 2 * Y16)
            del y1, y2


if __name__ == "__main__":
    unittest.main()

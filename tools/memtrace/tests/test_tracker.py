"""The tracker checked on cases whose live bytes are known by hand (run: python3 -m unittest)."""

import unittest

import torch

from memtrace.tracker import LiveBytes


class TrackerTest(unittest.TestCase):
    def test_views_share_storage_and_frees_are_seen(self):
        m = LiveBytes()
        with m:
            a = torch.ones(1000)  # 4000 B
            b = a * 2  # 4000 B more
            c = b[10:]  # a view: no new storage
            self.assertEqual(m.current, 8000)
            del b
            torch.ones(10)  # an op runs, so the tracker sweeps: b's storage lives on in c
            self.assertEqual(m.current, 8040)  # the 40 B result is live when the op returns
            del c
            torch.ones(1)
            self.assertEqual(m.current, 4004)
            self.assertEqual(m.peak, 8040)

    def test_autograd_keeps_what_backward_needs_and_nothing_else(self):
        x = torch.randn(256, requires_grad=True)  # 1024 B, adopted
        m = LiveBytes()
        m.adopt([x])
        with m:
            h = x * 2  # mul by a Python scalar saves nothing
            y = h.sin()  # sin saves its input: h stays alive
            del h
            torch.zeros(1)
            self.assertEqual(m.current, 1024 * 3 + 4)
            g = x * 3
            z = g.exp()  # exp saves its output, not its input: g is freed
            del g
            torch.zeros(1)
            self.assertEqual(m.current, 1024 * 4 + 4)
            del y, z

    def test_frozen_linear_saves_no_input(self):
        torch.manual_seed(0)
        lin = torch.nn.Linear(64, 64, bias=False)
        lin.weight.requires_grad_(False)
        m = LiveBytes()
        m.adopt([lin.weight])  # 16384 B
        with m:
            x = torch.randn(8, 64).requires_grad_(False) * 1.0  # 2048 B
            h = (x * 1.0).requires_grad_(True)  # leaf requiring grad: 2048 B
            del x
            u = h.sin()  # 2048 B; sin saves h
            y = lin(u)  # frozen weight: u is not needed for backward
            del u
            torch.zeros(1)
            # h (kept by sin) + y; u freed although a linear consumed it
            self.assertEqual(m.current, 16384 + 2048 + 2048 + 4)
            lin.weight.requires_grad_(True)
            u = h.sin()
            y2 = lin(u)  # trainable weight: the input is saved
            del u
            torch.zeros(1)
            self.assertEqual(m.current, 16384 + 2048 * 4 + 4)
            del y, y2


if __name__ == "__main__":
    unittest.main()

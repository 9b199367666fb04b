"""memtrace.peak_dump: the live set it keeps is the peak's, storage by storage (run: python3 -m
unittest)."""

import unittest

import torch

from memtrace.peak_dump import PeakLive


class PeakDumpTest(unittest.TestCase):
    def test_the_kept_live_set_sums_to_the_peak_and_names_its_makers(self):
        x = torch.ones(100)  # 400 B, adopted
        m = PeakLive()
        m.adopt([x])
        m.set_phase("forward")
        with m:
            a = x * 2  # 400 B
            b = a + 1  # 400 B: the peak, 1200 B
            del a
            torch.ones(1)  # 4 B; a is gone: 804 + 400 adopted
        del b
        phase, op, live = m.at_peak
        self.assertEqual(m.peak, 1200)
        self.assertEqual(sum(n for n, _ in live), 1200)
        self.assertEqual(op, "add.Tensor")
        made = sorted(who[2] for _, who in live if who and who[0] == "forward")
        self.assertEqual(made, ["add.Tensor", "mul.Tensor"])


if __name__ == "__main__":
    unittest.main()

"""The port of TRL's chunked NLL loss (memtrace.model.chunked_nll_loss, trl 1.9.0
`_chunked_cross_entropy_loss`) on a case small enough to count by hand: one sequence of 13
tokens (12 shifted rows), H = 8, V = 32, bf16, chunks of 4 rows (three chunks). Scalars (the
running sums, the valid count) add a few bytes: the bounds allow 64."""

import types
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

from memtrace.model import chunked_nll_loss
from memtrace.tracker import LiveBytes

S, H, V, C = 13, 8, 32, 4
ROWS = S - 1
SCALARS = 64


def model(w, chunk=C):
    head = nn.Linear(H, V, bias=False, dtype=torch.bfloat16)
    head.weight = w
    return types.SimpleNamespace(c={"nll_chunk": chunk}, spec={}, lm_head=head,
                                 head_weight=lambda: head.weight)


class TrlChunkedNllTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.h = torch.randn(1, S, H).to(torch.bfloat16).requires_grad_(True)  # 208 B
        self.w = nn.Parameter(torch.randn(V, H).to(torch.bfloat16), requires_grad=False)
        self.labels = torch.randint(0, V, (1, S))

    def test_loss_is_the_shifted_cross_entropy(self):
        loss = chunked_nll_loss(model(self.w), self.h, self.labels)
        ref = F.cross_entropy(self.h[0, :-1].float() @ self.w.float().t(), self.labels[0, 1:])
        torch.testing.assert_close(loss, ref, atol=1e-4, rtol=0)

    def test_only_the_gathered_rows_are_kept_and_chunks_peak_one_at_a_time(self):
        m = LiveBytes()
        m.adopt([self.h, self.w, self.labels])
        with m:
            base = m.mark("start")
            loss = chunked_nll_loss(model(self.w), self.h, self.labels)
            kept = m.mark("after") - base
            forward = m.peak - base
            m.reset_peak()
            before = m.mark("backward")
            loss.backward()
            backward = m.peak - before
            del loss
        gathered = ROWS * H * 2 + ROWS * 8 + ROWS * 8  # hidden[order], order, labels[order]
        cv = C * V * 4
        # Nothing of a chunk is saved in forward (non-reentrant checkpoint): the gathered copy.
        self.assertGreaterEqual(kept, gathered)
        self.assertLessEqual(kept, gathered + SCALARS)
        # Forward: at the entropy's product, the chunk's logits, log_p, exp(log_p) and the
        # product (w32, 1024 B, died after the mm).
        self.assertGreaterEqual(forward, gathered + 4 * cv)
        self.assertLessEqual(forward, gathered + 4 * cv + SCALARS)
        # Backward, above what the forward kept: a later chunk's recompute keeps w32 beside the
        # same four, with the gathered hidden's accumulated gradient (ROWS x H bf16) from the
        # chunk before.
        w32 = V * H * 4
        self.assertGreaterEqual(backward, w32 + 4 * cv + ROWS * H * 2)
        self.assertLessEqual(backward, w32 + 4 * cv + ROWS * H * 2 + SCALARS)


if __name__ == "__main__":
    unittest.main()

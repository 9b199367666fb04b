"""Baichuan-2's NormHead (modeling_baichuan.py): in training F.linear(h, F.normalize(weight)) makes
a normalized copy of the head weight, and the matmul keeps it for its input's gradient until the
head's backward ran, on top of what the HF loss path keeps."""

import unittest

from memtrace.run import measure

BASE = dict(hidden=64, layers=2, heads=4, kv_heads=4, head_dim=16, intermediate=128, vocab=384,
            tied=False, method="lora", lora_rank=8, lora_targets=["q_proj", "v_proj"],
            grad_ckpt="full", attn="flash", loss="hf", optim="adamw_foreach", batch=2, seq=48)


class NormHeadTest(unittest.TestCase):
    def test_norm_head_keeps_a_normalized_copy_of_the_head_weight(self):
        llama = measure(dict(BASE, family="llama"))
        baichuan = measure(dict(BASE, family="baichuan"))
        # One bf16 (2 B) copy of the vocab x hidden weight; the layers are the same.
        self.assertEqual(baichuan["loss"] - llama["loss"], 2 * BASE["vocab"] * BASE["hidden"])
        self.assertEqual(baichuan["activations"], llama["activations"])
        self.assertGreaterEqual(baichuan["peak"] - llama["peak"], 2 * BASE["vocab"] * BASE["hidden"])


if __name__ == "__main__":
    unittest.main()

"""Every ported family runs a full training step, and the measured terms obey what is known by
construction (gradients of a full fine-tune = the trained weights; LoRA keeps fewer activations
than a full fine-tune of the same block; checkpointing keeps fewer still)."""

import unittest

from memtrace.model import FAMILIES
from memtrace.run import measure

BASE = dict(hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, intermediate=128, vocab=256,
            tied=False, grad_ckpt="none", attn="sdpa", loss="hf", optim="adamw_foreach", batch=2,
            seq=32)


def cfg(**kw):
    c = dict(BASE)
    c.update(kw)
    if c["family"] == "gpt_neox":
        c["kv_heads"] = c["heads"]
    return c


class PortsTest(unittest.TestCase):
    def test_every_family_steps_and_full_grads_equal_weights(self):
        for fam in FAMILIES:
            with self.subTest(family=fam):
                m = measure(cfg(family=fam, method="full"))
                self.assertEqual(m["gradients"], m["weights"])
                self.assertEqual(m["optimizer"], 2 * m["weights"])
                self.assertGreater(m["activations"], 0)
                self.assertGreaterEqual(m["peak"], m["static"] + m["activations"])

    def test_lora_and_checkpointing_keep_less(self):
        full = measure(cfg(family="llama", method="full"))
        lora = measure(cfg(family="llama", method="lora", lora_rank=8,
                           lora_targets=["q_proj", "v_proj"]))
        ck = measure(cfg(family="llama", method="lora", lora_rank=8,
                         lora_targets=["q_proj", "v_proj"], grad_ckpt="full"))
        self.assertLess(lora["activations"], full["activations"])
        self.assertLess(ck["activations"], lora["activations"])
        self.assertEqual(lora["gradients"], lora["adapter"])
        # r (d_in + d_out) per adapted map, fp32: q 64->64, v 64->32, two layers
        self.assertEqual(lora["adapter"], 2 * 8 * ((64 + 64) + (64 + 32)) * 4)

    def test_chunked_output_keeps_the_fp32_log_softmax_and_upcasts_one_chunk_at_a_time(self):
        # torchtune's loss keeps every chunk's fp32 log-softmax (4 B per logit) and the shifted
        # int64 labels, as HF's does, but its forward holds one fp32 chunk at a time and its
        # backward one chunk's gradients: both phases peak lower.
        c = cfg(family="llama", method="lora", lora_rank=8, lora_targets=["q_proj"], vocab=512,
                batch=2, seq=64)
        tt = measure(dict(c, loss="chunked_output"))
        hf = measure(dict(c, loss="hf"))
        tokens = c["batch"] * c["seq"]
        # The loss term is measured after the stack's output (bf16, 2 B per hidden unit), which
        # a frozen head does not keep, is released.
        kept = 4 * c["vocab"] * tokens + 8 * tokens - 2 * c["hidden"] * tokens
        self.assertAlmostEqual(tt["loss"], kept, delta=64)
        self.assertAlmostEqual(tt["loss"], hf["loss"], delta=64)
        self.assertLess(tt["phase_peaks"]["forward"], hf["phase_peaks"]["forward"])
        self.assertLess(tt["phase_peaks"]["backward"], hf["phase_peaks"]["backward"])

    def test_qlora_base_is_packed_nf4(self):
        q = measure(cfg(family="llama", method="qlora", lora_rank=8, lora_targets=["q_proj"]))
        self.assertLess(q["weights"], measure(cfg(family="llama", method="lora", lora_rank=8,
                                                  lora_targets=["q_proj"]))["weights"])


if __name__ == "__main__":
    unittest.main()

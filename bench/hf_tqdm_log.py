#!/usr/bin/env python3
"""Writes an HF Trainer tqdm log of about SIZE_MB for the analyze benchmarks: '\r' redraws, a metric
dict every 10 steps, an eval dict and a checkpoint line every 500 steps (step numbers keep
increasing until the file reaches the size). Usage: hf_tqdm_log.py PATH SIZE_MB"""
import sys
path, size = sys.argv[1], int(sys.argv[2]) * 1024 * 1024
total = 10**9
with open(path, "w") as f:
    f.write("INFO:__main__:Transformers version: 4.57.6\n")
    step, written, elapsed = 0, 0, 0
    while written < size:
        parts = []
        for _ in range(500):
            step += 1
            elapsed += 21
            h, m, s = elapsed // 3600, elapsed // 60 % 60, elapsed % 60
            parts.append(f"\r  1%|          | {step}/{total} [{h}:{m:02}:{s:02}<10:20:10, 21.{step % 100:02}s/it]")
            if step % 10 == 0:
                parts.append("\n{'loss': 1.2345, 'grad_norm': 0.52, 'learning_rate': 0.0002, 'epoch': 0.1}\n")
        parts.append("\n{'eval_loss': 1.1, 'eval_runtime': 61.2, 'eval_samples_per_second': 3.2, 'epoch': 0.5}\n")
        parts.append(f"Saving model checkpoint to out/checkpoint-{step}\n")
        block = "".join(parts)
        f.write(block)
        written += len(block)

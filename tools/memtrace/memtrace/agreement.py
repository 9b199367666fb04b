"""The agreement test: the C++ estimator's step terms (tests/plan/memtrace_cmp) against the
tracer's measurement of the same step, over random configurations (memtrace.configs).

  run-python.sh -m memtrace.agreement --cmp build/dev/tests/plan/memtrace_cmp [--n 200] [--show]

Contract enforced (exit 1 otherwise):
  weights, adapter, optimizer, gradients,
  buffers                                  equal within 0.1 %
  activations, loss                        within 2 % of the step's peak
  peak (the allocated high-water mark)     within PEAK_WORST for every configuration, and within
                                           2 % for at least PEAK_SHARE of them
The peak bounds are where the backward walk stands today (docs/estimator.md lists the transients
it does not yet follow); they only ever tighten.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from memtrace.configs import random_configs
from memtrace.run import measure

EXACT = ("weights", "adapter", "optimizer", "gradients", "buffers")
OF_PEAK = ("activations", "loss")
PEAK_WORST = 0.02
PEAK_SHARE = 1.0


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmp", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--show", action="store_true")
    a = ap.parse_args(argv)
    cfgs = random_configs(a.n, a.seed)
    pred = json.loads(subprocess.run([a.cmp], input=json.dumps(cfgs), capture_output=True,
                                     text=True, check=True).stdout)
    bad, within, worst = [], 0, (0.0, None)
    for c, p in zip(cfgs, pred):
        m = measure(c)
        peak = m["peak"]
        tag = "{family} {method} attn={attn} ckpt={grad_ckpt} loss={loss} {optim} b={batch} s={seq}".format(**c)
        for k in EXACT:
            if abs(p[k] - m[k]) > 0.001 * max(m[k], 1):
                bad.append(f"{tag}: {k} {p[k]:.0f} vs measured {m[k]}")
        for k in OF_PEAK:
            if abs(p[k] - m[k]) > 0.02 * peak:
                bad.append(f"{tag}: {k} {p[k]:.0f} vs measured {m[k]} (peak {peak})")
        e = (p["peak"] - peak) / peak
        if abs(e) <= 0.02:
            within += 1
        if abs(e) > abs(worst[0]):
            worst = (e, tag)
        if abs(e) > PEAK_WORST:
            bad.append(f"{tag}: peak {p['peak']:.0f} vs measured {peak} ({e:+.1%})")
        if a.show:
            print(f"{tag:70s} peak {e:+6.1%}  acts {(p['activations'] - m['activations']) / peak:+6.1%}")
    share = within / len(cfgs)
    print(f"agreement: {len(cfgs)} configurations; static terms exact; peak within 2 % for "
          f"{within} ({share:.0%}); worst peak {worst[0]:+.1%} ({worst[1]})")
    if share < PEAK_SHARE:
        bad.append(f"peak within 2 % for only {share:.0%} (< {PEAK_SHARE:.0%})")
    for b in bad:
        print("DISAGREE", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

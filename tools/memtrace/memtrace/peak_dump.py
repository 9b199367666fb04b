"""The live storages at the step's peak operator, each with the phase, operator index and ATen
operator that created it, its shape and dtype: what the tracer sees that an estimate may miss.

  run-python.sh -m memtrace.peak_dump INDEX...   (draws of memtrace.configs.random_configs(200))
  run-python.sh -m memtrace.peak_dump --litgpt INDEX...   (memtrace.litgpt_agreement.CASES, the
                                                            LitGPT port's peak after the first step)

Storages registered before the step (parameters, optimizer states) are summed, not listed.
"""

from __future__ import annotations

import json
import sys

import torch

from memtrace.configs import random_configs
from memtrace.run import measure
from memtrace.tracker import LiveBytes, _storage_of


class PeakLive(LiveBytes):
    """LiveBytes that remembers who made each storage and copies the live set at every new peak."""

    def __init__(self):
        super().__init__()
        self.made_by = {}  # data_ptr -> (phase, operator index, operator, shape, dtype)
        self.op = "adopted"
        self.at_peak = None  # (phase, operator, [(nbytes, made_by)])

    def _register(self, t):
        if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
            return
        ptr = _storage_of(t).data_ptr()
        old = self._live.get(ptr)
        fresh = old is None or old[0].expired()
        super()._register(t)
        if fresh and ptr in self._live:
            self.made_by[ptr] = (self.phase, self.ops, self.op, tuple(t.shape),
                                 str(t.dtype).replace("torch.", ""))

    def _sweep(self):
        before = self.peak
        super()._sweep()
        if self.peak > before:
            live = [(n, self.made_by.get(p)) for p, (ref, n) in self._live.items() if not ref.expired()]
            self.at_peak = (self.phase, self.op, live)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.op = str(getattr(func, "__name__", func))
        return super().__torch_dispatch__(func, types, args, kwargs)


def dump(c, out=sys.stdout, litgpt=False):
    tr = PeakLive()
    if litgpt:
        from memtrace import litgpt as port

        m = port.measure(dict(c, iters=3, accum=4), tracker=lambda: tr)
        m["peak"] = max(m["peaks"][1:])
    else:
        m = measure(c, tracker=lambda: tr)
    phase, op, live = tr.at_peak
    print(json.dumps(c), file=out)
    print(f"peak {m['peak']} in {phase} at {op}; static {m['static']}", file=out)
    before = sum(n for n, who in live if who is None or who[0] == "setup")
    for n, who in sorted((x for x in live if x[1] and x[1][0] != "setup"), key=lambda x: x[1][1]):
        print(f"  {n:10d}  {who[0]:9s} #{who[1]:<5d} {who[2]:32s} {who[3]} {who[4]}", file=out)
    print(f"  {before:10d}  before the step", file=out)


def main(argv):
    if len(argv) > 1 and argv[1] == "--litgpt":
        from memtrace.litgpt_agreement import CASES

        for i in argv[2:]:
            dump(CASES[int(i)], litgpt=True)
        return 0
    cfgs = random_configs(200)
    for i in argv[1:]:
        dump(cfgs[int(i)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

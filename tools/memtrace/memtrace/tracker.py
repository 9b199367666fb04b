"""Live tensor bytes at every operator, from the storages torch itself allocates.

Exactness argument: every tensor that holds memory owns (or views) one storage. The tracker
registers each storage once, keyed by its data pointer, with its exact byte size and a
StorageWeakRef; a storage counts as live until that weak reference expires, which happens when the
last C++ reference (a Python tensor, a view, an autograd SavedVariable, an optimizer state) drops.
So "live bytes" is the sum of `nbytes` of storages torch has not freed: what
torch.cuda.memory_allocated() would report before its 512-byte block rounding. The sum is taken
after every operator (TorchDispatchMode sees every ATen call, forward and backward), so the peak is
the peak at operator granularity; temporaries an operator allocates and frees inside its own kernel
are not seen (none of the operators used by the ports do so on CPU).

Storages created before the tracker starts (parameters, optimizer states, inputs) are registered by
`adopt()`.
"""

from __future__ import annotations

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


_on_chip = [0]


class on_chip:
    """Inside this context the tracker ignores new storages: the arithmetic of an emulated fused
    kernel (flash attention's tiles) that a GPU keeps in registers and shared memory. Outputs the
    kernel writes must be allocated outside it."""

    def __enter__(self):
        _on_chip[0] += 1

    def __exit__(self, *exc):
        _on_chip[0] -= 1


def _storage_of(t: torch.Tensor):
    s = t.storage()
    return s._untyped() if hasattr(s, "_untyped") else s


class LiveBytes(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self._live = {}  # data_ptr -> (StorageWeakRef, nbytes)
        self.current = 0
        self.peak = 0
        self.peak_at = ""
        self.marks = {}  # name -> live bytes at the mark
        self.phase_peak = {}  # phase -> peak within it
        self.phase = "setup"
        self.ops = 0

    # -- registration -------------------------------------------------------------------------
    def _register(self, t):
        if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
            return
        s = _storage_of(t)
        nbytes = s.nbytes()
        if nbytes == 0:
            return
        ptr = s.data_ptr()
        old = self._live.get(ptr)
        if old is not None and not old[0].expired():
            return
        self._live[ptr] = (StorageWeakRef(s), nbytes)

    def adopt(self, tensors):
        for t in tensors:
            self._register(t)
        self._sweep()

    def _sweep(self):
        dead = [p for p, (ref, _) in self._live.items() if ref.expired()]
        for p in dead:
            del self._live[p]
        self.current = sum(n for _, n in self._live.values())
        if self.current > self.peak:
            self.peak = self.current
            self.peak_at = self.phase
        if self.current > self.phase_peak.get(self.phase, 0):
            self.phase_peak[self.phase] = self.current

    # -- markers --------------------------------------------------------------------------------
    def set_phase(self, name: str):
        self._sweep()
        self.phase = name
        self.phase_peak[name] = max(self.phase_peak.get(name, 0), self.current)

    def mark(self, name: str) -> int:
        self._sweep()
        self.marks[name] = self.current
        return self.current

    def reset_peak(self):
        self._sweep()
        self.peak = self.current
        self.phase_peak = {}

    # -- dispatch -------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if _on_chip[0]:
            return out
        self.ops += 1
        flat, _ = tree_flatten(out)
        for t in flat:
            self._register(t)
        self._sweep()
        return out

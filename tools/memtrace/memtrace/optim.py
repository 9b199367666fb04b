"""Optimizer steps as torch 2.x runs them, written with the operators torch 1.13 has.

adamw_foreach  torch/optim/adamw.py _multi_tensor_adamw (torch 2.1-2.5): states created lazily as
               zeros_like(param); in-place lerp/mul/addcmul on the state lists; then ONE temporary
               list `exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs)` the size of all trainable
               parameters of the dtype group, divided and offset in place, used by addcdiv.
adamw_fused    torch._fused_adamw_ (fused=True): one kernel per tensor list, no temporaries.
sgd            plain SGD without momentum: no state.
"""

from __future__ import annotations

import math

import torch

from memtrace.tracker import on_chip


class AdamW:
    def __init__(self, params, impl, lr=1e-4, betas=(0.9, 0.999), eps=1e-8, wd=0.01):
        self.params = [p for p in params if p.requires_grad]
        self.impl, self.lr, self.betas, self.eps, self.wd = impl, lr, betas, eps, wd
        self.state = {}
        self.steps = 0

    def state_tensors(self):
        return [t for st in self.state.values() for t in st]

    def step(self):
        self.steps += 1
        b1, b2 = self.betas
        ps = [p for p in self.params if p.grad is not None]
        for p in ps:
            if p not in self.state:
                self.state[p] = (torch.zeros_like(p), torch.zeros_like(p))
        # torch groups tensors by (device, dtype) before the foreach kernels.
        groups = {}
        for p in ps:
            groups.setdefault(p.dtype, []).append(p)
        bc1 = 1 - b1 ** self.steps
        bc2 = 1 - b2 ** self.steps
        step_size = self.lr / bc1
        for dtype, group in groups.items():
            grads = [p.grad for p in group]
            m = [self.state[p][0] for p in group]
            v = [self.state[p][1] for p in group]
            with torch.no_grad():
                torch._foreach_mul_(group, 1 - self.lr * self.wd)
                torch._foreach_mul_(m, b1)
                torch._foreach_add_(m, grads, alpha=1 - b1)
                torch._foreach_mul_(v, b2)
                torch._foreach_addcmul_(v, grads, grads, 1 - b2)
                del grads
                if self.impl == "adamw_foreach":
                    denom = torch._foreach_sqrt(v)
                    torch._foreach_div_(denom, math.sqrt(bc2))
                    torch._foreach_add_(denom, self.eps)
                    torch._foreach_addcdiv_(group, m, denom, -step_size)
                    del denom
                else:
                    # fused: element-wise in registers; emulated in 4096-element slices so no
                    # full-size temporary exists.
                    with on_chip():
                        for p, mm, vv in zip(group, m, v):
                            pf, mf, vf = p.view(-1), mm.view(-1), vv.view(-1)
                            for i in range(0, pf.numel(), 4096):
                                d = vf[i : i + 4096].sqrt().div_(math.sqrt(bc2)).add_(self.eps)
                                pf[i : i + 4096].addcdiv_(mf[i : i + 4096], d, value=-step_size)
                                del d


class SGD:
    def __init__(self, params, lr=1e-3):
        self.params = [p for p in params if p.requires_grad]
        self.lr = lr
        self.state = {}

    def state_tensors(self):
        return []

    def step(self):
        with torch.no_grad():
            for p in self.params:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-self.lr)


def make(impl, params):
    if impl == "sgd":
        return SGD(params)
    return AdamW(params, impl)

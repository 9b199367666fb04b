"""One measured training step. Input: a JSON object (or a list of them) describing the model and
the run; output: the same with a "measured" object of byte counts:

  weights      base model parameters (frozen or trained), incl. NF4 packed data and constants
  adapter      LoRA parameters
  optimizer    optimizer state tensors
  gradients    .grad tensors when the optimizer step starts
  buffers      persistent tensors outside the parameters: Unsloth's RoPE cache and, for QLoRA,
               fast_dequantize's global weight and absmax buffers (memtrace.unsloth); else 0
  inputs       input_ids and labels (int64); Unsloth configs add the collator's position_ids
  activations  live after the decoder stack and final norm, minus live before the forward
  loss         live after the loss, minus live after the decoder stack
  peak         the largest live total at any operator of the step; peak_phase says where
  phase_peaks  forward / backward / optimizer

Step 1 runs unmeasured (it creates the optimizer states); step 2 is measured from
zero_grad(set_to_none=True) onwards, as in every later step of a run.

  /usr/bin/python3 -m memtrace.run config.json   (or - for stdin)
"""

from __future__ import annotations

import json
import sys

import torch

from memtrace import model as M
from memtrace import optim as O
from memtrace.tracker import LiveBytes


def _nbytes(ts):
    seen, n = set(), 0
    for t in ts:
        s = t.storage()
        key = s.data_ptr()
        if key not in seen:
            seen.add(key)
            n += s.nbytes()
    return n


def measure(c, tracker=LiveBytes):
    """`tracker`: makes the LiveBytes to measure with (memtrace.peak_dump passes one that keeps
    the live set at the peak)."""
    torch.manual_seed(c.get("seed", 0))
    m = M.CausalLM(c)
    m.train()
    opt = O.make(c.get("optim", "adamw_foreach"), m.parameters())
    loss_fn = M.LOSSES[c.get("loss", "hf")]
    b, s = c["batch"], c["seq"]
    # TRL's collator hands Unsloth's forward position_ids (int64, b x s): an input of the step.
    with_pos = bool(c.get("unsloth_layer"))
    n_inputs = 3 if with_pos else 2

    def step(tr):
        for p in opt.params:
            p.grad = None  # zero_grad(set_to_none=True)
        if tr:
            tr.set_phase("forward")
            tr.mark("start")
        ids = torch.randint(0, c["vocab"], (b, s))
        labels = ids.clone()
        pos = torch.arange(s).repeat(b, 1) if with_pos else None
        h = m.hidden(ids, pos) if with_pos else m.hidden(ids)
        if tr:
            tr.mark("hidden")
        if getattr(loss_fn, "model_returns", False):
            # The loss runs after the model's forward returned (torchtune): its `h` is handed
            # over and dies when the head no longer needs it.
            hs = [h]
            del h
            loss = loss_fn(m, hs, labels)
        else:
            loss = loss_fn(m, h, labels)
            del h
        if tr:
            tr.mark("loss")
            tr.set_phase("backward")
        loss.backward()
        del loss, ids, labels, pos
        if tr:
            tr.set_phase("optimizer")
            tr.mark("grads")
        grads = _nbytes([p.grad for p in opt.params if p.grad is not None])
        opt.step()
        if tr:
            tr.set_phase("done")
        return grads

    step(None)
    tr = tracker()
    params = list(m.parameters()) + list(m.buffers())
    bufs = m.persistent_buffers()
    tr.adopt(params + opt.state_tensors() + bufs)
    lora = [p for n, p in m.named_parameters() if "lora_" in n]
    base = [p for n, p in m.named_parameters() if "lora_" not in n]
    with tr:
        tr.reset_peak()
        grads = step(tr)
    start = tr.marks["start"]
    return {
        "weights": _nbytes(base),
        "adapter": _nbytes(lora),
        "optimizer": _nbytes(opt.state_tensors()),
        "gradients": grads,
        "buffers": _nbytes(bufs),
        "static": start,
        "inputs": n_inputs * 8 * b * s,
        "activations": tr.marks["hidden"] - start - n_inputs * 8 * b * s,
        "loss": tr.marks["loss"] - tr.marks["hidden"],
        "peak": tr.peak,
        "peak_phase": tr.peak_at,
        "phase_peaks": {k: tr.phase_peak[k] for k in ("forward", "backward", "optimizer")},
    }


def main(argv):
    src = argv[1] if len(argv) > 1 else "-"
    data = json.load(sys.stdin if src == "-" else open(src))
    many = isinstance(data, list)
    out = []
    for c in data if many else [data]:
        r = dict(c)
        r["measured"] = measure(c)
        out.append(r)
    json.dump(out if many else out[0], sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)

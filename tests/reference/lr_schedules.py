"""PyTorch's own learning-rate schedulers, step by step, for GeoDL's to be compared with.

Usage: lr_schedules.py OUT.txt
Writes one line per case: its name, then the learning rate of every optimizer step (the
rate the optimizer holds when it steps, as torch.optim.lr_scheduler sets it).
"""
import sys

import torch

out = open(sys.argv[1], "w")


def optimizer(lr):
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)


def record(name, opt, sched, steps, per_epoch=None, losses=None):
    rates = []
    for s in range(steps):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        if per_epoch is None:
            sched.step()
        elif (s + 1) % per_epoch == 0:
            if losses is None:
                sched.step()
            else:
                sched.step(losses[(s + 1) // per_epoch - 1])
    out.write(name + " " + " ".join(repr(r) for r in rates) + "\n")


# OneCycleLR over 50 steps, rising for 30% (PyTorch's defaults but momentum).
opt = optimizer(0.01)
record("onecycle", opt, torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=50,
                                                             cycle_momentum=False), 50)
# StepLR by epoch: 5 steps an epoch, x0.5 every 2 epochs, 6 epochs.
opt = optimizer(0.01)
record("step", opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5), 30, per_epoch=5)
# ReduceLROnPlateau by epoch, patience 2, x0.1, on these validation losses.
losses = [1.0, 0.9, 0.95, 0.91, 0.9, 0.8, 0.85, 0.85, 0.85, 0.7]
opt = optimizer(0.01)
record("plateau", opt, torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.1, patience=2), 30,
       per_epoch=3, losses=losses)
# CosineAnnealingLR stepped every step, over all 40 of them.
opt = optimizer(0.01)
record("cosine", opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=40), 40)
out.close()

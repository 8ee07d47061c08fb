"""starling_optimizer.py: Starling's [optimizer] section as PyTorch optimizers, for the references.

  make_optimizer  `kind` as Starling runs it: "sgd" (momentum, Nesterov, weight decay as L2 in
                  the gradient), "adam" (beta1, beta2, eps 1e-8, L2 weight decay) and "adamw"
                  (decoupled decay on matrices only, p.dim() >= 2, as nanoGPT groups and
                  Starling's Layer::matrix_spans decays; eps 1e-8); foreach=True throughout.
  clip            adamw's global-norm clipping at clip_norm (clip_grad_norm_, as Starling's
                  AdamW before its step); nothing for the other kinds, which have no clipping.
  Schedule        learners/optimizers/schedule.cpp per step: linear warm-up over warmup_steps, then
                  constant, step (x gamma every step_epochs) or cosine to min_lr at the last step.

`o` is the resolved config's [optimizer] (starling_config.resolved_config).
"""
import math


def make_optimizer(o, model):
    import torch
    if o["kind"] == "sgd":
        # Nesterov without momentum is plain SGD in Starling; PyTorch refuses it.
        return torch.optim.SGD(model.parameters(), foreach=True, lr=o["lr"], momentum=o["momentum"],
                               nesterov=o["nesterov"] and o["momentum"] > 0, weight_decay=o["weight_decay"])
    if o["kind"] == "adamw":
        decay = [p for p in model.parameters() if p.dim() >= 2]
        rest = [p for p in model.parameters() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": o["weight_decay"]}, {"params": rest, "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, foreach=True, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=1e-8)
    return torch.optim.Adam(model.parameters(), foreach=True, lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=1e-8,
                            weight_decay=o["weight_decay"])


def clip(o, model):
    """Scales the gradient to global norm clip_norm when above it (adamw only, as Starling)."""
    import torch
    if o["kind"] == "adamw" and o["clip_norm"] > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), o["clip_norm"])


class Schedule:
    """learners/optimizers/schedule.cpp: the learning rate as a function of the step."""

    def __init__(self, o, steps_per_epoch, total_steps):
        self.kind, self.lr0, self.min_lr, self.warmup = o["schedule"], o["lr"], o["min_lr"], o["warmup_steps"]
        self.step_epochs, self.gamma = o["step_epochs"], o["gamma"]
        self.per_epoch, self.total = max(1, steps_per_epoch), max(1, total_steps)

    def lr(self, step):
        if step < self.warmup:
            return self.lr0 * (step + 1) / self.warmup
        if self.kind == "step":
            epoch = step / self.per_epoch
            return self.lr0 * self.gamma ** math.floor(epoch / self.step_epochs)
        if self.kind == "cosine":
            span = max(1, self.total - self.warmup)
            progress = min(1.0, (step - self.warmup) / span)
            return self.min_lr + (self.lr0 - self.min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))
        return self.lr0

    def is_drop(self, step):
        """A step-schedule drop after warm-up (actors/node_actor.cpp resets the optimizer there)."""
        return self.kind == "step" and step > 0 and step >= self.warmup and self.lr(step) < self.lr(step - 1)

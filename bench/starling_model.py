"""starling_model.py: the PyTorch twin of a Starling model, built from `starling model --json`.

The architecture is defined once, in Starling (learners/model_description.cpp); the PyTorch
references ask the `starling` binary for it rather than keep copies of their own.
Starling's activations are height x width x channels and PyTorch's channels first: the
layers are the same, only a flatten orders its features differently, which does not matter
for a model trained from its own initialisation.
"""
import json

from starling_config import run_starling


def describe(starling, config, overrides=()):
    """The model description of `config` (a TOML path) with `overrides` (section.key=value);
    starling_config.StarlingError when `starling model` fails."""
    return json.loads(run_starling(starling, ["model", "--json"], config, overrides))


def torch_model(description):
    """An nn.Sequential with the description's layers, in its order."""
    import torch.nn as nn

    class Residual(nn.Module):
        """y = body(x) + shortcut(x), the shortcut the identity when it has no layers."""

        def __init__(self, body, shortcut):
            super().__init__()
            self.body, self.shortcut = body, shortcut

        def forward(self, x):
            return self.body(x) + self.shortcut(x)

    def chain(layers):
        return nn.Sequential(*[layer(d) for d in layers])

    def layer(d):
        kind = d["kind"]
        if kind == "dense":
            h, w, c = d["in"]
            return nn.Linear(h * w * c, d["size"])
        if kind == "conv2d":
            return nn.Conv2d(d["in"][2], d["size"], d["kernel"], stride=d["stride"], padding=d["padding"],
                             bias=d["bias"])
        if kind == "maxpool2d":
            return nn.MaxPool2d(d["kernel"], stride=d["stride"], padding=d["padding"])
        if kind == "avgpool2d":
            return nn.AvgPool2d(d["kernel"], stride=d["stride"])
        if kind == "dropout":
            return nn.Dropout(d["rate"])
        if kind == "relu":
            return nn.ReLU()
        if kind == "flatten":
            return nn.Flatten()
        if kind == "groupnorm":
            return nn.GroupNorm(d["groups"], d["in"][2], eps=1e-5)
        if kind == "global_avgpool":
            return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        if kind == "residual":
            return Residual(chain(d["body"]), chain(d["shortcut"]) if d["shortcut"] else nn.Identity())
        raise ValueError("starling_model: unknown layer kind %r" % kind)

    return chain(description["layers"])

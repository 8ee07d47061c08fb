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


def torch_gpt(d):
    """nanoGPT's model (Karpathy's model.py, no dropout) at the export's sizes: token and
    position embeddings, pre-LayerNorm blocks with fused QKV causal attention and a 4x GELU
    MLP, biases on, a final LayerNorm, the head tied to the token embedding; N(0, 0.02)
    weights, the two output projections of each block N(0, 0.02/sqrt(2 blocks)). Its
    forward maps token ids [B, T] to logits [B, T, vocab]."""
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    width, heads, context, vocab, blocks = d["width"], d["heads"], d["context"], d["vocab"], d["blocks"]

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn, self.c_proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.register_buffer("mask", torch.tril(torch.ones(context, context, dtype=torch.bool)))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(x).split(width, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            s = (q @ k.transpose(-2, -1)) / math.sqrt(c // heads)
            s = s.masked_fill(~self.mask[:t, :t], float("-inf"))
            y = F.softmax(s, dim=-1) @ v
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(width), Attention(), nn.LayerNorm(width)
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.h = nn.ModuleList(Block() for _ in range(blocks))
            self.ln_f = nn.LayerNorm(width)
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, 0.0, 0.02)
                if isinstance(m, nn.Linear):
                    nn.init.zeros_(m.bias)
            for block in self.h:
                for proj in (block.attn.c_proj, block.mlp[2]):
                    nn.init.normal_(proj.weight, 0.0, 0.02 / math.sqrt(2 * blocks))

        def forward(self, ids):
            x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1], device=ids.device))
            for block in self.h:
                x = block(x)
            return self.ln_f(x) @ self.wte.weight.t()  # the tied head

    return Gpt()


def torch_model(description):
    """An nn.Sequential with the description's layers, in its order; the GPT (torch_gpt)
    for a "gpt" export."""
    import torch.nn as nn

    if description["kind"] == "gpt":
        return torch_gpt(description)

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

"""starling_model.py: the PyTorch twin of a Starling model, built from `starling model --json`.

The architecture is defined once, in Starling (learners/models/model_description.cpp); the PyTorch
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
    """An nn.Sequential with the description's layers, in its order. A language model (its
    first layer a token_embedding: the "gpt" preset, or a layer list like it) maps token ids
    [B, T] to logits [B, T, vocab], initialised as its export says (nanoGPT's N(0, 0.02),
    the output projections N(0, projection_std)); the images' models keep PyTorch's init."""
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def normal_linear(n_in, n_out, std):
        linear = nn.Linear(n_in, n_out)
        nn.init.normal_(linear.weight, 0.0, std)
        nn.init.zeros_(linear.bias)
        return linear

    class Attention(nn.Module):
        """Causal self-attention with the fused QKV and the output projection inside."""

        def __init__(self, d):
            super().__init__()
            _, context, width = d["in"]
            self.heads, self.width = d["heads"], width
            self.c_attn = normal_linear(width, 3 * width, d["init_std"])
            self.c_proj = normal_linear(width, width, d["projection_std"])
            self.register_buffer("mask", torch.tril(torch.ones(context, context, dtype=torch.bool)))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(x).split(self.width, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
            s = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
            s = s.masked_fill(~self.mask[:t, :t], float("-inf"))
            y = F.softmax(s, dim=-1) @ v
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class SwiGlu(nn.Module):
        """W2 · (silu(W1 x) * W3 x) per token, W1 and W3 fused as Starling's are."""

        def __init__(self, d):
            super().__init__()
            width, self.hidden = d["in"][2], d["size"]
            self.w13 = normal_linear(width, 2 * self.hidden, d["init_std"])
            self.w2 = normal_linear(self.hidden, width, d["projection_std"])

        def forward(self, x):
            a, b = self.w13(x).split(self.hidden, dim=-1)
            return self.w2(F.silu(a) * b)

    class PositionEmbedding(nn.Module):
        def __init__(self, d):
            super().__init__()
            _, context, width = d["in"]
            self.weight = nn.Parameter(torch.randn(context, width) * 0.02)

        def forward(self, x):
            return x + self.weight[: x.shape[1]]

    class RmsNorm(nn.Module):
        """nn.RMSNorm(C, eps=1e-5), which torch 1.13 lacks."""

        def __init__(self, width):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(width))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight

    class TiedHead(nn.Module):
        """logits = x @ Wᵀ with W the first token embedding's (held outside the module's
        own parameters, so it is counted and trained once)."""

        def __init__(self, embedding):
            super().__init__()
            self.embedding = [embedding]

        def forward(self, x):
            return x @ self.embedding[0].weight.t()

    embeddings = []  # the token embeddings built so far: a tied head ties to the first

    def token_embedding(d):
        embedding = nn.Embedding(d["vocab"], d["size"])
        nn.init.normal_(embedding.weight, 0.0, 0.02)
        embeddings.append(embedding)
        return embedding

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
        if kind == "dense" and d.get("per_token"):
            return normal_linear(d["in"][2], d["size"], d["init_std"])
        if kind == "dense":
            h, w, c = d["in"]
            return nn.Linear(h * w * c, d["size"])
        if kind == "token_embedding":
            return token_embedding(d)
        if kind == "position_embedding":
            return PositionEmbedding(d)
        if kind == "layernorm":
            return nn.LayerNorm(d["in"][2], eps=1e-5)
        if kind == "rmsnorm":
            return RmsNorm(d["in"][2])
        if kind == "attention":
            return Attention(d)
        if kind == "gelu":
            return nn.GELU()
        if kind == "swiglu":
            return SwiGlu(d)
        if kind == "tied_head":
            return TiedHead(embeddings[0])
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

    # One builder per Starling layer kind, here only: a kind Starling gains needs its line above.
    return chain(description["layers"])

#!/usr/bin/python3
"""nanogpt.py: nanoGPT's GPT as a PyTorch module, with nanoGPT's module and parameter names,
and safetensors read and written with nothing but the standard library and torch.

The model is nanoGPT's (Karpathy's model.py) rebuilt from its description: token and
position embeddings, pre-LayerNorm blocks x + attn(ln_1(x)) and x + mlp(ln_2(x)) with a fused
c_attn, causal scaled dot-product attention and c_proj, a 4x MLP with exact GELU, biases on,
ln_f, and lm_head tied to wte. Its state_dict keys are nanoGPT's, so a file `starling export`
writes loads with load_state_dict(strict=True), and a file this module saves is what
`starling generate --checkpoint FILE.safetensors` and run.init_from read.

  nanogpt.py logits  --weights M.safetensors --tokens IDS.txt --out LOGITS.f32
  nanogpt.py train   --text FILE --steps N --out M.safetensors [--layers L --heads H --width C --context T]
  nanogpt.py generate --weights M.safetensors --prompt TEXT --bytes N    (greedy, bytes to stdout)

A file whose metadata names a SentencePiece tokenizer ("tokenizer": "sentencepiece", its
"tokenizer_model" beside the file, as `starling export` writes them) generates N tokens,
encoded and decoded with python3-sentencepiece.
"""
import argparse
import json
import math
import os
import struct
import sys
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    block_size: int = 64
    vocab_size: int = 256
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd = config.n_head, config.n_embd
        # The causal mask, as nanoGPT keeps it where PyTorch lacks scaled_dot_product_attention
        # (Debian's 1.13); not saved, so the state dict holds parameters only.
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("bias", mask.view(1, 1, config.block_size, config.block_size), persistent=False)

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (y.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        y = self.attn_dropout(F.softmax(att, dim=-1)) @ v
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c)))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT ties them
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        """Logits at every position and, with targets, the mean cross-entropy."""
        t = idx.size(1)
        assert t <= self.config.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    @torch.no_grad()
    def generate_greedy(self, idx, new_tokens):
        for _ in range(new_tokens):
            logits, _ = self(idx[:, -self.config.block_size:])
            idx = torch.cat((idx, logits[:, -1, :].argmax(dim=-1, keepdim=True)), dim=1)
        return idx


def config_of(metadata):
    return GPTConfig(block_size=int(metadata["block_size"]), vocab_size=int(metadata["vocab_size"]),
                     n_layer=int(metadata["n_layer"]), n_head=int(metadata["n_head"]),
                     n_embd=int(metadata["n_embd"]), bias=metadata.get("bias", "true") == "true")


def read_safetensors(path):
    """(tensors by name, metadata) of an F32 safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    body = data[8 + n:]
    tensors = {}
    for name, entry in header.items():
        assert entry["dtype"] == "F32", f"{name}: {entry['dtype']}"
        begin, end = entry["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(body[begin:end]), dtype=torch.float32).reshape(entry["shape"])
    return tensors, metadata


def write_safetensors(path, tensors, metadata):
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name, t in tensors.items():
        blob = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load(path):
    tensors, metadata = read_safetensors(path)
    model = GPT(config_of(metadata))
    model.load_state_dict(tensors, strict=True)
    return model.eval()


def tokenizer_of(path):
    """The SentencePiece processor beside the file its metadata names, or None for bytes."""
    _, metadata = read_safetensors(path)
    if metadata.get("tokenizer", "bytes") != "sentencepiece":
        return None
    import sentencepiece
    return sentencepiece.SentencePieceProcessor(model_file=os.path.join(os.path.dirname(path), metadata["tokenizer_model"]))


def save(model, path):
    c = model.config
    metadata = {"format": "pt", "architecture": "nanoGPT", "n_layer": str(c.n_layer), "n_head": str(c.n_head),
                "n_embd": str(c.n_embd), "block_size": str(c.block_size), "vocab_size": str(c.vocab_size),
                "bias": "true" if c.bias else "false", "tokenizer": "bytes"}
    write_safetensors(path, model.state_dict(), metadata)


def train(args):
    torch.manual_seed(args.seed)
    data = torch.tensor(list(open(args.text, "rb").read()), dtype=torch.long)
    model = GPT(GPTConfig(block_size=args.context, n_layer=args.layers, n_head=args.heads, n_embd=args.width))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, foreach=True)
    for step in range(args.steps):
        starts = torch.randint(len(data) - args.context - 1, (args.batch,))
        x = torch.stack([data[s:s + args.context] for s in starts])
        y = torch.stack([data[s + 1:s + 1 + args.context] for s in starts])
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step == 0 or step + 1 == args.steps:
            print(f"step {step + 1} loss {loss.item():.4f}", file=sys.stderr)
    save(model, args.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    lg = sub.add_parser("logits")
    lg.add_argument("--weights", required=True)
    lg.add_argument("--tokens", required=True)
    lg.add_argument("--out", required=True)
    tr = sub.add_parser("train")
    tr.add_argument("--text", required=True)
    tr.add_argument("--out", required=True)
    tr.add_argument("--steps", type=int, default=200)
    tr.add_argument("--layers", type=int, default=1)
    tr.add_argument("--heads", type=int, default=2)
    tr.add_argument("--width", type=int, default=32)
    tr.add_argument("--context", type=int, default=32)
    tr.add_argument("--batch", type=int, default=16)
    tr.add_argument("--lr", type=float, default=3e-3)
    tr.add_argument("--seed", type=int, default=1)
    ge = sub.add_parser("generate")
    ge.add_argument("--weights", required=True)
    ge.add_argument("--prompt", required=True)
    ge.add_argument("--bytes", type=int, default=64)
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.command == "train":
        return train(args)
    model = load(args.weights)
    if args.command == "logits":
        ids = [int(t) for t in open(args.tokens).read().split()]
        context = model.config.block_size
        x = torch.tensor(ids, dtype=torch.long).view(-1, context)
        with torch.no_grad():
            logits, _ = model(x)
        with open(args.out, "wb") as f:
            f.write(logits.contiguous().numpy().astype("<f4").tobytes())
    else:
        sp = tokenizer_of(args.weights)
        ids = sp.encode(args.prompt) if sp else list(args.prompt.encode())
        prompt = torch.tensor([ids], dtype=torch.long)
        out = model.generate_greedy(prompt, args.bytes)[0, prompt.size(1):].tolist()
        sys.stdout.buffer.write(sp.decode(out).encode() if sp else bytes(out))


if __name__ == "__main__":
    main()

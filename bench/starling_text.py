"""starling_text.py: a Starling text job's data as Starling splits it, for the PyTorch references.

The split is defined once, in Starling: `starling partition` (cli/partition_command.cpp)
exports the files it reads (in its order, each with its size and training bytes) and each
peer's training ranges under data.partition. This module reads that export, reads the same
files back to back, and gives what a learner needs:

  corpus      every file's bytes concatenated in the export's order, so a byte's offset is
              its offset in Starling's TextCorpus::bytes();
  parts       each peer's ranges [(begin, end)] as corpus offsets (iid: every file's training
              part; by-file and dirichlet: the peer's own);
  validation  the starts of the validation windows, learners/data/text_corpus.cpp's
              validation_windows: in each file's last bytes, at a stride of window - 1;
  loss        validation_loss, evaluate_text's mean nats per byte over every window.

A file whose size differs from the export's (changed in between) or a validation count
that differs from Starling's is an error (TextError): the two would no longer see the same
bytes.
"""
import json
import math

from starling_config import run_starling


class TextError(RuntimeError):
    """The files on disk are not the text the export describes."""


def export(starling, config, overrides=()):
    """`starling partition`'s description of `config`'s text and its split, as a dict;
    starling_config.StarlingError when it fails (code 2: a config error)."""
    return json.loads(run_starling(starling, ["partition"], config, overrides))


class TextJob:
    """The text of an export (`export` above, or its JSON file) and its peers' parts."""

    def __init__(self, exported):
        self.window = exported["window"]
        self.context = self.window - 1
        data, begins = bytearray(), []
        for f in exported["files"]:
            with open(f["path"], "rb") as fh:
                content = fh.read()
            if len(content) != f["bytes"]:
                raise TextError("%s: %d bytes, but Starling read %d (changed since?)" % (f["path"], len(content), f["bytes"]))
            begins.append(len(data))
            data += content
        self.corpus = bytes(data)
        self.parts = [[(begins[r["file"]] + r["begin"], begins[r["file"]] + r["end"]) for r in p["ranges"]]
                      for p in exported["peers"]]
        self.validation = [at for f, begin in zip(exported["files"], begins)
                           for at in range(begin + f["train_bytes"], begin + f["bytes"] - self.window + 1, self.window - 1)]
        if len(self.validation) != exported["validation_windows"]:
            raise TextError("%d validation windows here, %d in Starling" % (len(self.validation), exported["validation_windows"]))
        self._tokens = None

    def windows(self, starts):
        """(inputs, targets), each [len(starts), context] int64: the windows at `starts`,
        every position's target the next byte."""
        import torch
        if self._tokens is None:
            self._tokens = torch.frombuffer(bytearray(self.corpus), dtype=torch.uint8).long()
        w = self._tokens[torch.as_tensor(starts, dtype=torch.long)[:, None] + torch.arange(self.window)]
        return w[:, :-1], w[:, 1:]

    def validation_loss(self, model, batch=32):
        """The mean cross-entropy in nats per byte over every validation window (Starling's
        val_loss; val_bpb = val_loss / ln 2), the model in eval mode meanwhile."""
        import torch
        import torch.nn.functional as F
        model.eval()
        total = 0.0
        with torch.no_grad():
            for i in range(0, len(self.validation), batch):
                x, y = self.windows(self.validation[i:i + batch])
                total += F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction="sum").item()
        model.train()
        return total / (len(self.validation) * self.context)


def bits_per_byte(nats):
    return nats / math.log(2)

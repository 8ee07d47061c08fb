"""starling_sampling.py: Starling's seeded draws, bit for bit, for the PyTorch references.

  mix_seed       learners/data/sampler.cpp's splitmix64 step, which derives every stream Starling
                 draws from (epochs of the image sampler, the text learners' windows).
  window_seed    learners/tasks/text_task.cpp's window_seed: the seed a text learner's windows
                 come from, the run's seed mixed with the peer's rank (its stream), so peers
                 draw independently and a lone node (rank 0) keeps its windows.
  WindowSampler  learners/data/text_sampler.cpp: a batch's window starts at a step, each a pure
                 function of (seed, step, position in the batch), uniform with replacement
                 over every start the peer's ranges offer. The same seed and ranges give the
                 same starts as Starling's learner.
Imports no torch.
"""
import bisect

MASK = (1 << 64) - 1


def mix_seed(a, b):
    """splitmix64 of (a, b), as learners/data/sampler.cpp's mix_seed (64-bit wrap-around)."""
    z = (a + 0x9e3779b97f4a7c15 * (b + 1)) & MASK
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
    return z ^ (z >> 31)


def window_seed(seed, stream):
    """The seed of the windows of the text learner of peer `stream` (its rank; 0 on one node)."""
    return mix_seed(seed, (0x7e47 ^ (stream << 32)) & MASK)


class WindowSampler:
    """Window starts over `ranges` ([(begin, end)] offsets into the corpus, in the peer's
    order), as WindowSampler(part, window, seed, shard 0) in learners/data/text_sampler.cpp."""

    def __init__(self, ranges, window, seed):
        if window < 2:
            raise ValueError("a window needs at least two bytes")
        self.begins = [begin for begin, _ in ranges]
        self.cumulative = [0]
        for begin, end in ranges:
            self.cumulative.append(self.cumulative[-1] + max(0, end - begin - window + 1))
        if self.cumulative[-1] == 0:
            raise ValueError("the peer's text holds no window of %d bytes" % window)
        self.seed = mix_seed(seed, 0)  # shard 0: one learner per peer

    def starts(self):
        """Every start the ranges offer (an epoch is this many windows)."""
        return self.cumulative[-1]

    def batch(self, step, n):
        """The starts of step `step`'s n windows."""
        total, step_seed = self.cumulative[-1], mix_seed(self.seed, step)
        out = []
        for i in range(n):
            k = mix_seed(step_seed, i) % total
            r = bisect.bisect_right(self.cumulative, k) - 1  # the range holding the k-th start
            out.append(self.begins[r] + k - self.cumulative[r])
        return out

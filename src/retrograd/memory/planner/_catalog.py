"""The models ``python -m retrograd plan`` knows by name, with a batch and a loss: two of
torchvision's (ViT-B/16, ResNet-50) and a small GPT (nanoGPT's "baby GPT" shape:
6 layers, 6 heads, width 384, context 256, a 65-symbol vocabulary)."""

import math

from ... import nn
from ..._creation import randint, randn
from ...nn import functional as F
from ... import models

__all__ = ["MODELS", "GPT", "build"]


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in self.qkv(x).split(d, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """A decoder-only transformer as nanoGPT's: learned positions, pre-norm blocks, the
    output head tied to the token embedding."""

    def __init__(self, vocab=65, context=256, layers=6, heads=6, dim=384):
        super().__init__()
        self.context = context
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.blocks = nn.Sequential(*(Block(dim, heads) for _ in range(layers)))
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.wte.weight
        for name, p in self.named_parameters():
            if name.endswith("proj.weight") or name.endswith("mlp.2.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * layers))

    def forward(self, idx):
        t = idx.shape[1]
        pos = self.wpe.weight[:t]
        return self.head(self.ln_f(self.blocks(self.wte(idx) + pos)))


def _images(n):
    x, y = randn(n, 3, 224, 224), randint(0, 1000, (n,))
    return (x,), lambda out: F.cross_entropy(out, y)


def _tokens(n, vocab=65, context=256):
    idx, target = randint(0, vocab, (n, context)), randint(0, vocab, (n, context))
    return (idx,), lambda out: F.cross_entropy(out.reshape(-1, vocab), target.reshape(-1))


# name -> (the model, a batch of n: (example_inputs, loss_fn))
MODELS = {"vit_b_16": (models.vit_b_16, _images), "resnet50": (models.resnet50, _images),
          "gpt": (GPT, _tokens)}


def build(name, batch):
    """``(model, example_inputs, loss_fn)`` for the catalog model ``name``."""
    make_model, make_batch = MODELS[name]
    return (make_model(), *make_batch(batch))

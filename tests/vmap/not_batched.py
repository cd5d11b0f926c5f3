"""Op-database entries that do not batch under vmap as under torch.vmap without a
loop, each with why: the ops that fall back to a loop over the batch, or the
first failure (regenerate with ``PYTHONPATH=src:tests python
tests/vmap/vmap_run.py --write``; a test fails when a listed entry starts to
pass, so the list only shrinks). Entries
where torch.vmap's result differs from torch's own calls sample by sample,
and retrograd's matches those calls, are in ``TORCH_VMAP_DIFFERS``."""

NOT_BATCHED = {
}

# torch.vmap differs from torch's own calls sample by sample; retrograd matches them
TORCH_VMAP_DIFFERS = {
    '__eq__': 'values',
    '__ne__': 'values',
    '__le__': 'values',
    '__gt__': 'values',
    'index_select': 'values and gradients',
    'median': 'gradients',
    'as_strided_.inplace': 'values and gradients',
    'embedding': 'gradients',
    'max': 'gradients',
    'min': 'gradients',
    'argmax': 'values',
    'argmin': 'values',
    'all': 'values',
    'any': 'values',
    'roll': 'values and gradients',
    'select_scatter': 'gradients',
}

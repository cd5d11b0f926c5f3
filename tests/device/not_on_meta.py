"""Op-database entries that do not run on the meta device, each with where it
fails (regenerate with ``python tests/device/meta_run.py --write``; a test fails
when a listed entry starts to pass, so the list only shrinks)."""

NOT_ON_META = {
    'linalg.lstsq':
        "AssertionError: sample 1: RuntimeError('Tensor.item() cannot be called on meta tensors",
    'multi_margin_loss':
        'ops/losses.py multi_margin_loss: RuntimeError: Tensor.item() cannot be called on meta ',
}

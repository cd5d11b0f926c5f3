"""Op-database entries that do not run on the meta device, each with where it
fails (regenerate with ``PYTHONPATH=src:tests python tests/device/meta_run.py
--write``; a test fails when a listed entry starts to pass, so the list only
shrinks)."""

NOT_ON_META = {
    'linalg.lstsq': "PyTorch's meta refuses it too (no kernel): the residuals' shape needs ranks",
    'multi_margin_loss': "PyTorch's meta: unbatched with a 0-d target gives (1,), its CPU ()",
}

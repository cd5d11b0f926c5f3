"""Tests of retrograd.utils; shared models live in _ckpt_models.py."""

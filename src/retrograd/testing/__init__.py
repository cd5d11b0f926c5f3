"""Test support: the op database and tensor factories (PyTorch's OpInfo idea)."""

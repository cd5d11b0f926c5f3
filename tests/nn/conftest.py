"""The nn tests; helpers live in _nn_util.py."""

"""shape ops."""

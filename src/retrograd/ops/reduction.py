"""reduction ops."""

"""indexing ops."""

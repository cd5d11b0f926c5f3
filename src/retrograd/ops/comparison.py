"""comparison ops."""

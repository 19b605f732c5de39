"""Layer 4: the client."""

"""Layer 4: the server framework (decorators, registries, Context)."""

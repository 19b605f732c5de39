"""Layer 1: the sans-IO protocol. Nothing here awaits or touches a file descriptor."""

"""Layer 5: the implementation of the `mcpio` command line (the parser is in mcpio.cli)."""

"""Layer 2: transports move framed messages (bytes, one JSON document each); see ``_base``."""

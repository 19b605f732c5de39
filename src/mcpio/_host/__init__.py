"""Layer 4: hosts: configuration files of MCP hosts, and one object for many servers."""

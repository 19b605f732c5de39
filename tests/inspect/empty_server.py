"""A server with nothing: no tools, no resources, no prompts (the inspector's empty states)."""

from mcpio import Server

server = Server("empty", version="0.1.0")

if __name__ == "__main__":
    server.run()

import os
from mcp.server.mcpserver import MCPServer

server = MCPServer("die")

@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"

@server.tool()
def die() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)

if __name__ == "__main__":
    server.run()

"""A server on the PyPI `mcp` package over HTTP: streamable HTTP answering
in plain JSON bodies (no event streams), or the legacy HTTP + SSE transport.

Usage: http_server.py PORT [streamable-http|sse]
"""
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("http")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@server.tool()
def header(name: str, ctx: Context) -> str:
    """Echo one header of the HTTP request that carried this call."""
    headers = ctx.headers or {}
    return headers.get(name, "<absent>")


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


if __name__ == "__main__":
    port = int(sys.argv[1])
    if sys.argv[2:] == ["sse"]:
        server.run("sse", port=port)
    else:
        server.run("streamable-http", port=port, json_response=True)

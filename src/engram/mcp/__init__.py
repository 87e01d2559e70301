"""The MCP server: stdio transport, dispatcher, tool/resource/prompt tables.

Thin adapters over the domain: tool handlers validate the wire shape, call the
domain, and shape its answer into a result. No memory logic lives here.
"""

"""The MCP wire: JSON-RPC framing and messages, and the two protocol eras.

Knows bytes, messages and protocol versions; knows nothing of tools or memory.
"""

"""The host side of governed memory: profiles, setup, and the embedding API.

Everything here is for the host operator (``engram host …``) or for a host that
embeds the engine in-process; none of it is reachable through MCP.
"""

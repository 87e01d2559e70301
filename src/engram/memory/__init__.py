"""Governed memory: the six ``engram_memory_*`` tools of the memory contract.

The domain: closed schemas, binding, lifecycle, admission, recall, receipts and the
engine that ties them together over a store port. It never imports a database
driver, the MCP layer or the command line; hosts reach it through
:mod:`engram.host` (profiles, the embedding API) and agents through
:mod:`engram.mcp.memory_tools`.
"""

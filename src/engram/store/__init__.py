"""Persistence adapters behind the domain's ports: ``sqlite/`` (embedded, WAL)."""

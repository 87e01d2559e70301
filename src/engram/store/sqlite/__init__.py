"""The embedded SQLite adapters: one file per store, WAL mode, many processes."""

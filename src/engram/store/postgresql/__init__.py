"""The governed store on PostgreSQL (psycopg 3; the ``postgres`` extra)."""

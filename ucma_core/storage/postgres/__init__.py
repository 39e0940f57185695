"""A memory shared by many processes: PostgreSQL for records, graph and keywords, a
Chroma server for vectors (see :mod:`~ucma_core.storage.postgres.backend`)."""

from ucma_core.storage.postgres.url import PostgresTarget, is_postgres_url

__all__ = ["PostgresTarget", "is_postgres_url"]

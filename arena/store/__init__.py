"""Results (SQLite) and replay files of a tournament; resume."""

from arena.store.database import ResultStore, StoredMatch, StoreError

__all__ = ["ResultStore", "StoreError", "StoredMatch"]

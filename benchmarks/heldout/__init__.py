"""A held-out retrieval benchmark: conversations between named people, reported on, never tuned on."""

"""Retrieval-quality benchmark for conversational memory (see README.md in this folder)."""

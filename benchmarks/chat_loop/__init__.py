"""The chat-loop benchmark: what a memory keeps, learns and forgets from a conversation."""

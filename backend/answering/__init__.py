"""Answering: questions, conversation sessions (binges) and the answer pipeline glue."""

"""The channel layer: one way to take a question, check who asks, run the answer and encode its events."""

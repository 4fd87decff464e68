"""The Slack channel: events in (HTTP or Socket Mode), answers streamed into threads, feedback back."""

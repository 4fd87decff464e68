"""Embeddable widget: widget ids, allowed origins, widget endpoints."""

"""Shared kernel: base models, errors, locks, encrypted fields, system checks, launcher."""

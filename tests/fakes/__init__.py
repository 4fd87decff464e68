"""Test doubles: fake servers speaking vendors' wire protocols on 127.0.0.1, and generated test files."""

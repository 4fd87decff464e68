"""Local fake servers that speak vendors' wire protocols on 127.0.0.1, for the real SDKs to call."""

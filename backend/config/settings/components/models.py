"""Model-provider keys and limits read from the environment (providers arrive with issue #3)."""

from backend.config.env import env_int, env_str

OPENGURU_ENCRYPTION_KEY = env_str("OPENGURU_ENCRYPTION_KEY")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
GEMINI_API_KEY = env_str("GEMINI_API_KEY")
FIRECRAWL_API_KEY = env_str("FIRECRAWL_API_KEY")
FIRECRAWL_API_URL = env_str("FIRECRAWL_API_URL")
OPENGURU_MAX_PDF_BYTES = env_int("OPENGURU_MAX_PDF_BYTES", 100 * 1024 * 1024)

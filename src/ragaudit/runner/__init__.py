"""Running retrievers over datasets: concurrency, timeouts, per-case errors."""

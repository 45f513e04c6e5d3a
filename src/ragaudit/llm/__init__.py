"""Clients for language-model endpoints (used by the LLM reranker and the LLM query rewriter)."""

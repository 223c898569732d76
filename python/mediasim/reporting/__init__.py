"""Shared helpers for studies' reports: Markdown tables and plots."""

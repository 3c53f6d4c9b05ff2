"""rota's Python helpers for jobs (stdlib only). See docs/design-malleable.md."""

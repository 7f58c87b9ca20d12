"""posenc report generator: JSON results -> Markdown pages with SVG plots (see reports/README.md)."""

"""SVG pictures rendered at build time in pure Python: DAGs, task timelines, histograms."""

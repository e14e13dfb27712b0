"""Renderers: typed results in, text out (the text summary, JSON, HTML, and the pages
of the DP release and the linkage commands). Nothing here computes a measure or reads a
file."""
